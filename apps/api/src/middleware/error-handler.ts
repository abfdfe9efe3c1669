import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'
import { DomainError, isDomainError } from '@quire/domain'
import type { Logger } from 'pino'
import { errorResponse } from '../http/errors.ts'

/** Translates body-parser failures (formidable, co-body) into domain errors with stable codes. */
function fromParserError(err: { status?: number; httpCode?: number; code?: number | string; message?: string; type?: string }) {
  const status = err.httpCode ?? err.status
  if (status === 413) return new DomainError('FILE_TOO_LARGE', 'upload exceeds the size limit (100 MB per file)')
  if (status === 415) return new DomainError('UNSUPPORTED_MEDIA_TYPE', err.message ?? 'unsupported content type')
  if (status && status >= 400 && status < 500) {
    return new DomainError('MALFORMED_REQUEST', `the request body could not be read: ${err.message ?? 'malformed'}`)
  }
  return null
}

/** Top of the chain: every error becomes an envelope; only unexpected ones are logged, with an id to quote. */
export function errorHandler(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (raw) {
      const err = isDomainError(raw) ? raw : fromParserError(raw as never)
      if (err) {
        const res = errorResponse(err)
        ctx.status = res.status
        ctx.body = res.body
        return
      }
      const errorId = randomUUID()
      log.error({ err: raw, errorId, path: ctx.path }, 'unexpected error')
      ctx.status = 500
      ctx.body = { error: 'INTERNAL', message: `internal error (id ${errorId})`, timestamp: new Date().toISOString() }
    }
  }
}
