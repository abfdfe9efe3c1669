import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'
import { DomainError, isDomainError } from '@quire/domain'
import type { Logger } from 'pino'
import { fromBodyError } from '../http/body-errors.ts'
import { closeAfterResponse } from '../http/connection.ts'
import { errorResponse } from '../http/errors.ts'

/**
 * Errors that are the client's doing but arrive as library errors: body-parser failures (formidable, co-body,
 * raw-body, zlib) and a malformed percent-encoding in the path (URIError from decoding route parameters).
 */
function fromClientError(raw: unknown): DomainError | null {
  if (raw instanceof URIError) return new DomainError('MALFORMED_REQUEST', 'the request URL contains malformed percent-encoding')
  return fromBodyError(raw)
}

/**
 * Top of the chain: every error becomes an envelope; only unexpected ones are logged, with an id to quote.
 * An error answered while the request body is still arriving closes the connection after the response
 * (closeAfterResponse) rather than reading the rest of a body nobody will use.
 */
export function errorHandler(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (raw) {
      const err = isDomainError(raw) ? raw : fromClientError(raw)
      if (err) {
        const res = errorResponse(err)
        ctx.status = res.status
        ctx.body = res.body
      } else {
        const errorId = randomUUID()
        log.error({ err: raw, errorId, path: ctx.path }, 'unexpected error')
        ctx.status = 500
        ctx.body = { error: 'INTERNAL', message: `internal error (id ${errorId})`, timestamp: new Date().toISOString() }
      }
      closeAfterResponse(ctx)
    }
  }
}
