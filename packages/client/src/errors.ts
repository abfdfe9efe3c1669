/**
 * An answer of the API outside 2xx. Quire answers errors in two envelopes (flat `{error, message}` for most, nested
 * `{error: {code, message}}` for authentication, scope and job lookups); both end up here with the same fields.
 */
export class QuireApiError extends Error {
  override readonly name = 'QuireApiError'

  constructor(
    readonly status: number,
    /** The stable machine code, e.g. `job_not_found`, `PIPELINE_NOT_PUBLISHED`. */
    readonly code: string,
    message: string,
    /** The `X-Request-Id` answer header when the server sends one. */
    readonly requestId: string | null,
    /** The parsed body as received. */
    readonly body: unknown,
  ) {
    super(`${status} ${code}: ${message}`)
  }

  static from(response: Response, body: unknown): QuireApiError {
    const { code, message } = envelopeOf(body) ?? { code: `http_${response.status}`, message: response.statusText }
    return new QuireApiError(response.status, code, message, response.headers.get('x-request-id'), body)
  }
}

function envelopeOf(body: unknown): { code: string; message: string } | null {
  if (typeof body !== 'object' || body === null) return null
  const { error, message } = body as { error?: unknown; message?: unknown }
  if (typeof error === 'string') return { code: error, message: typeof message === 'string' ? message : error }
  if (typeof error === 'object' && error !== null) {
    const nested = error as { code?: unknown; message?: unknown }
    if (typeof nested.code === 'string') {
      return { code: nested.code, message: typeof nested.message === 'string' ? nested.message : nested.code }
    }
  }
  return null
}

/** A job did not reach a final status before the deadline given to `waitForJob` / `submit({wait})`. */
export class QuireTimeoutError extends Error {
  override readonly name = 'QuireTimeoutError'

  constructor(
    readonly jobId: string,
    readonly lastStatus: string,
  ) {
    super(`job ${jobId} still ${lastStatus} at the deadline`)
  }
}

/** Why a webhook delivery was refused; `malformed` covers missing or unreadable headers and bodies. */
export type WebhookVerificationReason = 'malformed' | 'bad_signature' | 'stale_timestamp'

/** A webhook delivery whose signature or timestamp did not verify: answer it with 4xx and drop it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'

  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message)
  }
}
