import { digestsEqual, hmacSha256Hex } from './hmac.signing.ts'

/** Input of {@link verifyFormA}. */
export type VerifyFormAOptions = {
  /** The webhook signing secret, exactly as issued. */
  secret: string
  /** The received body bytes, before any JSON parsing. */
  rawBody: string | Buffer
  /** Value of the `X-Service-Signature` header; undefined/null when missing. */
  signature: string | null | undefined
}

/**
 * Form A signature: `sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed with the
 * secret string as-is. There is no timestamp in Form A.
 */
export function signFormA(secret: string, rawBody: string | Buffer): string {
  return `sha256=${hmacSha256Hex(secret, [rawBody])}`
}

/**
 * Verifies a Form A signature in constant time. Returns false for a missing, malformed or
 * non-matching signature; never throws. Form A has no age check (retries resend the original).
 */
export function verifyFormA({ secret, rawBody, signature }: VerifyFormAOptions): boolean {
  if (typeof signature !== 'string' || typeof secret !== 'string') return false
  const trimmed = signature.trim()
  const eq = trimmed.indexOf('=')
  if (eq < 0 || trimmed.slice(0, eq).toLowerCase() !== 'sha256') return false
  return digestsEqual(hmacSha256Hex(secret, [rawBody]), trimmed.slice(eq + 1))
}
