import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import { OUTAGE_RETRY_AFTER_S, toClientError } from '../http/body-errors.ts'
import { closeAfterResponse } from '../http/connection.ts'
import { errorResponse, INTERNAL_ERROR_CODE } from '../http/errors.ts'

/**
 * Under the request id (request-id.ts): every error becomes an envelope; only unexpected ones are logged, with an
 * id to quote and the request's id.
 * An error answered while the request body is still arriving closes the connection after the response
 * (closeAfterResponse) rather than reading the rest of a body nobody will use.
 */
export function errorHandler(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (raw) {
      if (ctx.req.aborted || ctx.req.socket?.destroyed) {
        // The client went away mid-request: nothing to answer, nothing wrong with Quire.
        log.info({ requestId: ctx.state.requestId, path: ctx.path, method: ctx.method }, 'client aborted the request')
        return
      }
      const err = toClientError(raw)
      if (err) {
        const res = errorResponse(err)
        ctx.status = res.status
        ctx.body = res.body
        if (err.code === 'SERVICE_UNAVAILABLE') {
          ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_S))
          log.warn({ err: raw, requestId: ctx.state.requestId, path: ctx.path }, 'dependency unavailable: answered 503')
        }
      } else {
        const errorId = randomUUID()
        log.error({ err: raw, errorId, requestId: ctx.state.requestId, path: ctx.path }, 'unexpected error')
        ctx.status = 500
        ctx.body = {
          error: INTERNAL_ERROR_CODE,
          message: `internal error (id ${errorId})`,
          timestamp: new Date().toISOString(),
        }
      }
      closeAfterResponse(ctx)
    }
  }
}
