import { createHmac, timingSafeEqual } from 'node:crypto'

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/

export function hmacSha256Hex(secret: string, parts: ReadonlyArray<string | Buffer>): string {
  // The secret is the key exactly as issued (UTF-8 bytes of the string), never base64-decoded.
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'))
  for (const part of parts) {
    if (typeof part === 'string') hmac.update(part, 'utf8')
    else hmac.update(part)
  }
  return hmac.digest('hex')
}

// Constant-time comparison of two hex digests; false when either is not a 32-byte hex digest.
export function digestsEqual(expectedHex: string, receivedHex: string): boolean {
  if (!HEX_DIGEST.test(expectedHex) || !HEX_DIGEST.test(receivedHex)) return false
  const a = Buffer.from(expectedHex, 'hex')
  const b = Buffer.from(receivedHex, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

export function isHexDigest(value: string): boolean {
  return HEX_DIGEST.test(value)
}
