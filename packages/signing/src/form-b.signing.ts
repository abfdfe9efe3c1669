import { DEFAULT_TOLERANCE_SECONDS, FORM_B_SCHEME } from './headers.constants.ts'
import { digestsEqual, hmacSha256Hex, isHexDigest } from './hmac.signing.ts'

/** Input of {@link verifyFormB}. */
export type VerifyFormBOptions = {
  /** The webhook signing secret, exactly as issued. */
  secret: string
  /** The received body bytes, before any JSON parsing. */
  rawBody: string | Buffer
  /** Value of `X-Service-Signature`: `<scheme>=<hex>`; any scheme name is accepted. */
  signature: string | null | undefined
  /** Value of `X-Service-Timestamp`: Unix epoch seconds (header string or number). */
  timestamp: string | number | null | undefined
  /** Maximum age (and maximum clock skew into the future), in seconds. Default 300. */
  toleranceSeconds?: number
  /** Current time as epoch milliseconds (like `Date.now()`) or a Date. Default: now. */
  now?: number | Date
}

/** Outcome of {@link verifyFormB}. */
export type VerifyFormBResult = { ok: true } | { ok: false; reason: 'bad_signature' | 'stale_timestamp' | 'malformed' }

const SIGNATURE_SHAPE = /^([A-Za-z0-9_.-]+)=([0-9a-fA-F]+)$/
const TIMESTAMP_SHAPE = /^\d{1,15}$/

/**
 * Form B signature: `v1=` + lowercase hex HMAC-SHA256 of `${timestampSeconds}.${rawBody}`,
 * keyed with the secret string as-is.
 * @throws TypeError when `timestampSeconds` is not a non-negative integer (a programming error).
 */
export function signFormB(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError(`timestampSeconds must be a non-negative integer, got ${timestampSeconds}`)
  }
  return `${FORM_B_SCHEME}=${hmacSha256Hex(secret, [`${timestampSeconds}.`, rawBody])}`
}

/**
 * Verifies a Form B delivery: shape first (`malformed`), then the timestamp window
 * (`stale_timestamp`, too old or too far in the future), then the HMAC in constant time
 * (`bad_signature`). Never throws.
 */
export function verifyFormB(options: VerifyFormBOptions): VerifyFormBResult {
  const { secret, rawBody, signature, timestamp } = options
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (typeof secret !== 'string' || typeof signature !== 'string') return { ok: false, reason: 'malformed' }

  const tsText =
    typeof timestamp === 'number' ? String(timestamp) : typeof timestamp === 'string' ? timestamp.trim() : ''
  if (!TIMESTAMP_SHAPE.test(tsText)) return { ok: false, reason: 'malformed' }
  const match = SIGNATURE_SHAPE.exec(signature.trim())
  const receivedHex = match?.[2]
  if (receivedHex === undefined || !isHexDigest(receivedHex)) return { ok: false, reason: 'malformed' }

  const nowMs = options.now instanceof Date ? options.now.getTime() : (options.now ?? Date.now())
  const ageSeconds = Math.floor(nowMs / 1000) - Number(tsText)
  if (!(Math.abs(ageSeconds) <= toleranceSeconds)) return { ok: false, reason: 'stale_timestamp' }

  // Sign the timestamp text exactly as received so that e.g. leading zeros cannot be normalised away.
  const expectedHex = hmacSha256Hex(secret, [`${tsText}.`, rawBody])
  return digestsEqual(expectedHex, receivedHex) ? { ok: true } : { ok: false, reason: 'bad_signature' }
}
