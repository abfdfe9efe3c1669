import { createHmac, timingSafeEqual } from 'node:crypto'
import { WebhookVerificationError } from './errors.ts'
import type { components as FormA } from './generated/form-a.ts'
import type { components as FormB } from './generated/form-b.ts'

/**
 * Verifies Quire webhook deliveries in a receiver. Pass the body exactly as received (a Buffer or the raw string):
 * the signature covers bytes, so a body parsed and re-serialised no longer verifies. Copied from, not imported from,
 * the dispatcher's signing package so this package stays self-contained; the tests sign with the dispatcher's code.
 */

export type FormAEvent = FormA['schemas']['FormAWebhookPayload']
export type FormBEvent = FormB['schemas']['FormBWebhookPayload']

/** Incoming headers as Node (`req.headers`), fetch (`Headers`) or a plain object gives them; names any case. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>

const SIGNATURE = 'x-service-signature'
const TIMESTAMP = 'x-service-timestamp'
const HEX_DIGEST = /^[0-9a-f]{64}$/i

/** Form A: `X-Service-Signature: sha256=<hex HMAC-SHA256(raw body)>`; no timestamp, retries resend the original. */
export function verifyFormA(rawBody: Buffer | string, headers: HeadersLike, secret: string): FormAEvent {
  const hex = digestOf(header(headers, SIGNATURE), /^sha256$/i)
  check(hex, [toBuffer(rawBody)], secret)
  return parse(rawBody)
}

export type VerifyFormBOptions = {
  /** Largest accepted age (and clock skew into the future) of `X-Service-Timestamp`, in seconds. Default 300. */
  toleranceSeconds?: number
  /** The receiver's clock, as a Date or epoch milliseconds. Default: now. */
  now?: Date | number
}

/** Form B: `X-Service-Signature: <scheme>=<hex HMAC-SHA256("<X-Service-Timestamp>.<raw body>")>`, 300 s window. */
export function verifyFormB(
  rawBody: Buffer | string,
  headers: HeadersLike,
  secret: string,
  { toleranceSeconds = 300, now = Date.now() }: VerifyFormBOptions = {},
): FormBEvent {
  const timestamp = header(headers, TIMESTAMP)?.trim()
  if (!timestamp || !/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('malformed', 'missing or malformed X-Service-Timestamp')
  }
  const hex = digestOf(header(headers, SIGNATURE), /^[A-Za-z0-9_.-]+$/)
  const nowSeconds = Math.floor((now instanceof Date ? now.getTime() : now) / 1000)
  if (!(Math.abs(nowSeconds - Number(timestamp)) <= toleranceSeconds)) {
    throw new WebhookVerificationError('stale_timestamp', 'X-Service-Timestamp is outside the tolerance')
  }
  // The timestamp is signed as the text received, so a re-formatted number cannot match.
  check(hex, [Buffer.from(`${timestamp}.`), toBuffer(rawBody)], secret)
  return parse(rawBody)
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value
  }
  return undefined
}

function digestOf(signature: string | undefined, scheme: RegExp): string {
  const [name, hex, ...rest] = (signature ?? '').trim().split('=')
  if (rest.length > 0 || !name || !scheme.test(name) || !hex || !HEX_DIGEST.test(hex)) {
    throw new WebhookVerificationError('malformed', 'missing or malformed X-Service-Signature')
  }
  return hex.toLowerCase()
}

function check(receivedHex: string, signed: Buffer[], secret: string): void {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('the webhook secret must be a non-empty string')
  const hmac = createHmac('sha256', secret)
  for (const part of signed) hmac.update(part)
  // Both are 32 bytes (the shape was checked), so timingSafeEqual cannot throw on a length difference.
  if (!timingSafeEqual(hmac.digest(), Buffer.from(receivedHex, 'hex'))) {
    throw new WebhookVerificationError('bad_signature', 'the signature does not match the body and secret')
  }
}

function toBuffer(rawBody: Buffer | string): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8')
  if (Buffer.isBuffer(rawBody) || (rawBody as unknown) instanceof Uint8Array) return Buffer.from(rawBody)
  throw new TypeError('verify the raw body (Buffer or string), not a parsed object')
}

function parse<T>(rawBody: Buffer | string): T {
  try {
    return JSON.parse(toBuffer(rawBody).toString('utf8')) as T
  } catch {
    throw new WebhookVerificationError('malformed', 'the signed body is not JSON')
  }
}
