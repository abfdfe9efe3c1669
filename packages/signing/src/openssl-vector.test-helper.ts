import { execFileSync } from 'node:child_process'

// Computes HMAC-SHA256 with the openssl CLI so test vectors never come from the code under test.
export function opensslHmacHex(key: string, data: string | Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', key], { input: data }).toString('utf8')
  const match = /=\s*([0-9a-f]{64})\s*$/.exec(out.trim())
  if (!match?.[1]) throw new Error(`unexpected openssl output: ${out}`)
  return match[1]
}
