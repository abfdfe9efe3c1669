import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'

/** An id a caller may choose: short and plain, so it is safe to log and to send back in a header. */
const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Gives every request an id and answers it as `X-Request-Id`, errors included: a caller's own id when it sent a
 * usable one (to follow a request through its own systems and ours), else a new one. The error handler logs it, and
 * `@quire/client` puts it on its errors, so a user can quote it.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const sent = ctx.get('X-Request-Id')
    const id = CALLER_ID.test(sent) ? sent : `req_${randomUUID().replaceAll('-', '')}`
    ctx.state.requestId = id
    ctx.set('X-Request-Id', id)
    await next()
  }
}
