import { performance } from 'node:perf_hooks'
import type { Dispatcher } from 'undici'
import { createGuardedDispatcher } from './guarded-dispatcher.transport.ts'
import { WEBHOOK_USER_AGENT } from './webhook-headers.policy.ts'
import { receiverAccepted } from './retry.policy.ts'

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
  const ownDispatcher =
    options.dispatcher === undefined
      ? createGuardedDispatcher({ allowPrivate: false, connectTimeoutMs: options.connectTimeoutMs })
      : undefined
  try {
    return await post(options, options.dispatcher ?? ownDispatcher!)
  } finally {
    if (ownDispatcher) await ownDispatcher.destroy().catch(() => undefined)
  }
}

// The exchange goes to the dispatcher with a handler of its own (undici's dispatch API) rather than through
// `request`: the response body is counted and dropped as it arrives, without the readable stream, async resource and
// abort signal `request` builds per call; the backstop deadline is one shared timer (see deadlines), not a timer and
// an AbortSignal per request.
function post(options: DeliverWebhookOptions, dispatcher: Dispatcher): Promise<DeliveryResult> {
  const started = performance.now()
  const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  return new Promise<DeliveryResult>((resolve) => {
    let statusCode: number | undefined
    let read = 0
    let abort: ((err: Error) => void) | null = null
    let settled = false
    const finish = (err: unknown) => {
      if (settled) return
      settled = true
      deadlines.delete(exchange)
      resolve(outcome(statusCode, err, Math.round(performance.now() - started)))
    }
    const exchange: Exchange = {
      // Backstop for the whole exchange (connect + response), whatever the dispatcher's settings.
      deadline: started + options.connectTimeoutMs + options.timeoutMs,
      expire() {
        const err = new DeliveryDeadlineError()
        if (abort) abort(err)
        finish(err)
      },
    }
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest) {
        abort = abortRequest
        if (settled) abortRequest(new DeliveryDeadlineError())
      },
      onHeaders(status) {
        if (status < 200) return true // 1xx: the final status follows
        statusCode = status
        return true
      },
      onData(chunk) {
        read += chunk.length
        // Enough read: the status decides, the rest is dropped with the connection.
        if (read > limit) abort?.(new ResponseTooLargeError())
        return true
      },
      onComplete() {
        finish(null)
      },
      onError(err) {
        finish(err)
      },
    }
    let url: URL
    try {
      url = new URL(options.url)
    } catch (err) {
      finish(err)
      return
    }
    deadlines.add(exchange)
    try {
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.search ? `${url.pathname}${url.search}` : url.pathname,
          method: 'POST',
          body: options.body,
          headers: buildHeaders(options.headers),
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        },
        handler,
      )
    } catch (err) {
      finish(err)
    }
  })
}

function outcome(statusCode: number | undefined, err: unknown, durationMs: number): DeliveryResult {
  // Once the status line is in, the status decides: a broken, slow or oversized body after it does not.
  if (statusCode !== undefined) {
    if (receiverAccepted(statusCode)) return { ok: true, statusCode, durationMs }
    const errorKind: DeliveryErrorKind = statusCode >= 300 && statusCode < 400 ? 'redirect' : 'http_status'
    return {
      ok: false,
      statusCode,
      errorKind,
      error: `${errorKind}: receiver answered ${statusCode}${errorKind === 'redirect' ? ' (redirects are not followed)' : ''}`,
      durationMs,
    }
  }
  const errorKind = classifyError(err)
  return { ok: false, errorKind, error: `${errorKind}: ${describe(err)}`, durationMs }
}

function buildHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': WEBHOOK_USER_AGENT }
  for (const name in headers) out[name.toLowerCase()] = headers[name]!
  out['content-type'] = 'application/json'
  return out
}

class DeliveryDeadlineError extends Error {
  override name = 'TimeoutError'
  constructor() {
    super('no complete response before the delivery deadline (connect + response timeouts)')
  }
}

class ResponseTooLargeError extends Error {
  constructor() {
    super('response body over the read limit; the rest is dropped')
  }
}

/** An exchange under way, with the time (performance.now()) by which it must have settled. */
type Exchange = { deadline: number; expire(): void }

/**
 * The exchanges under way and their deadlines, checked by one timer (running only while the set is not empty and never
 * keeping the process alive). A deadline fires up to DEADLINE_TICK_MS late: it is a backstop behind undici's own
 * connect, headers and body timeouts, which act on time.
 */
const deadlines = (() => {
  const DEADLINE_TICK_MS = 100
  const pending = new Set<Exchange>()
  let timer: NodeJS.Timeout | null = null
  const check = () => {
    const now = performance.now()
    for (const e of pending) if (e.deadline <= now) e.expire()
    if (pending.size === 0 && timer) {
      clearInterval(timer)
      timer = null
    }
  }
  return {
    add(e: Exchange) {
      pending.add(e)
      if (!timer) {
        timer = setInterval(check, DEADLINE_TICK_MS)
        timer.unref()
      }
    },
    delete(e: Exchange) {
      pending.delete(e)
    },
  }
})()

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
