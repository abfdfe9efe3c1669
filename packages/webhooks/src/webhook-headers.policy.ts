/** How the service authenticates to a receiver. */
export type WebhookAuth =
  | { type: 'none' }
  | { type: 'api_key'; headerName: string; key: string }
  | { type: 'basic'; username: string; password: string }

/** Outcome of {@link assertNoReservedHeaders}. */
export type HeaderCheckResult =
  | { ok: true }
  | { ok: false; code: 'reserved_header' | 'invalid_header'; header: string; reason: string }

/** `User-Agent` of every delivery (spec, Form A; used for Form B too). */
export const WEBHOOK_USER_AGENT = 'Service-Webhook/1.0'

/** Header-name prefix the service owns; static headers may not use it. */
export const RESERVED_HEADER_PREFIX = 'x-service-'

// Headers the transport or the signature owns: framing and hop-by-hop headers would corrupt the
// request, and the service sets Content-Type and User-Agent itself.
const RESERVED_HEADER_NAMES: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'user-agent',
])

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Visible ASCII, space and tab, plus obs-text; no CR, LF or NUL (header injection).
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

/**
 * Header(s) that carry the receiver credential: `api_key` sends the key in `headerName`
 * (spec default `X-API-Key`), `basic` sends `Authorization: Basic base64(username:password)`.
 */
export function buildAuthHeaders(auth: WebhookAuth): Record<string, string> {
  switch (auth.type) {
    case 'none':
      return {}
    case 'api_key':
      return { [auth.headerName]: auth.key }
    case 'basic':
      return {
        Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`,
      }
  }
}

/**
 * Validates a webhook's static headers (and, by the same rule, an api_key header name):
 * refuses names starting with `X-Service-` (any case), transport/hop-by-hop headers (Host,
 * Content-Length, Content-Type, Transfer-Encoding, Connection, ...), User-Agent, names that are
 * not HTTP tokens, and values containing CR, LF or other control characters.
 */
export function assertNoReservedHeaders(headers: Record<string, string>): HeaderCheckResult {
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) {
      return { ok: false, code: 'invalid_header', header: name, reason: `invalid header name "${name}"` }
    }
    const lower = name.toLowerCase()
    if (lower.startsWith(RESERVED_HEADER_PREFIX)) {
      return {
        ok: false,
        code: 'reserved_header',
        header: name,
        reason: `header names starting with X-Service- are reserved`,
      }
    }
    if (RESERVED_HEADER_NAMES.has(lower)) {
      return { ok: false, code: 'reserved_header', header: name, reason: `header ${name} is set by the service` }
    }
    if (typeof value !== 'string' || !FIELD_VALUE.test(value)) {
      return { ok: false, code: 'invalid_header', header: name, reason: `invalid value for header ${name}` }
    }
  }
  return { ok: true }
}
