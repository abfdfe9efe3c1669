import { performance } from 'node:perf_hooks'
import { request, type Dispatcher } from 'undici'
import { createGuardedDispatcher } from './guarded-dispatcher.transport.ts'
import { WEBHOOK_USER_AGENT } from './webhook-headers.policy.ts'

/** Input of {@link deliverWebhook}. */
export type DeliverWebhookOptions = {
  url: string
  /** The exact JSON text that was signed; sent byte-for-byte. */
  body: string
  /** Signature, delivery id, auth and static headers. Content-Type is always application/json. */
  headers: Record<string, string>
  /** Wait for the response headers (and between body chunks), in ms (spec: 30 s). */
  timeoutMs: number
  /** TCP + TLS connect timeout in ms (spec: 10 s). Used only when no `dispatcher` is given. */
  connectTimeoutMs: number
  /**
   * Connection pool to use; normally one long-lived `createGuardedDispatcher(...)`. Without it a
   * one-off guarded dispatcher (public addresses only) is created and destroyed per call.
   */
  dispatcher?: Dispatcher
  /** Most response-body bytes read before the rest is discarded. Default 64 KiB. */
  maxResponseBytes?: number
}

/** Failure classes of {@link deliverWebhook}. */
export type DeliveryErrorKind =
  | 'http_status'
  | 'redirect'
  | 'timeout'
  | 'connect_timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'dns_error'
  | 'tls_error'
  | 'blocked_address'
  | 'invalid_request'
  | 'network_error'

/** Outcome of one delivery attempt. `ok` is true exactly for a 2xx status. */
export type DeliveryResult = {
  ok: boolean
  /** Present whenever a response status line was received. */
  statusCode?: number
  /** `<kind>: <detail>`, present when `ok` is false. */
  error?: string
  errorKind?: DeliveryErrorKind
  durationMs: number
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024

/**
 * One POST of a webhook body. Success is any 2xx; 3xx is a failure and is not followed; every
 * other status, timeout or network error is a failure. The response body is read up to
 * `maxResponseBytes` and discarded. Never throws. Sets `User-Agent: Service-Webhook/1.0` unless
 * `headers` carries one.
 */
export async function deliverWebhook(options: DeliverWebhookOptions): Promise<DeliveryResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const ownDispatcher =
    options.dispatcher === undefined
      ? createGuardedDispatcher({ allowPrivate: false, connectTimeoutMs: options.connectTimeoutMs })
      : undefined
  const dispatcher = options.dispatcher ?? ownDispatcher
  try {
    const response = await request(options.url, {
      method: 'POST',
      body: options.body,
      headers: buildHeaders(options.headers),
      dispatcher,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // Backstop for the whole exchange (connect + response), whatever the dispatcher's settings.
      signal: AbortSignal.timeout(options.connectTimeoutMs + options.timeoutMs),
    })
    const { statusCode } = response
    await drain(response.body, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES)
    if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, durationMs: elapsed() }
    const errorKind: DeliveryErrorKind = statusCode >= 300 && statusCode < 400 ? 'redirect' : 'http_status'
    return {
      ok: false,
      statusCode,
      errorKind,
      error: `${errorKind}: receiver answered ${statusCode}${errorKind === 'redirect' ? ' (redirects are not followed)' : ''}`,
      durationMs: elapsed(),
    }
  } catch (err) {
    const errorKind = classifyError(err)
    return { ok: false, errorKind, error: `${errorKind}: ${describe(err)}`, durationMs: elapsed() }
  } finally {
    if (ownDispatcher) await ownDispatcher.destroy().catch(() => undefined)
  }
}

function buildHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': WEBHOOK_USER_AGENT }
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value
  out['content-type'] = 'application/json'
  return out
}

// Reads at most about `limit` bytes so the connection can be reused, then drops the rest (a body announced larger is
// dropped at once). undici's dump settles when the body closes, whatever happened to it.
async function drain(body: Dispatcher.ResponseData['body'], limit: number): Promise<void> {
  try {
    await body.dump({ limit })
  } catch {
    // The status decides the outcome; a broken or slow body after it does not.
  }
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|HOSTNAME_MISMATCH)|_CERT|CERT_/

function classifyError(err: unknown): DeliveryErrorKind {
  const code = errorCode(err)
  const name = err instanceof Error ? err.name : ''
  if (code === 'QUIRE_WEBHOOK_ADDRESS_BLOCKED') return 'blocked_address'
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'connect_timeout'
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout'
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_ABORTED') return 'timeout'
  if (code === 'ECONNREFUSED') return 'connection_refused'
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return 'connection_reset'
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME') return 'dns_error'
  if (code !== undefined && TLS_CODE.test(code)) return 'tls_error'
  if (code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_URL' || code === 'ERR_INVALID_ARG_TYPE') {
    return 'invalid_request'
  }
  return 'network_error'
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string') return code
  // undici sometimes wraps the socket error.
  const cause = (err as { cause?: unknown }).cause
  return cause !== undefined && cause !== err ? errorCode(cause) : undefined
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name
  return String(err)
}
