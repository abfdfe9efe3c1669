import { DomainError } from '@quire/domain'
import type { Middleware } from 'koa'
import { koaBody } from 'koa-body'

/**
 * Parses a JSON object body with a size limit, for routes the app-level JSON parser skips (POST /v1/jobs).
 * Invalid JSON → 400 MALFORMED_REQUEST (via the error handler); a body over the limit → 400 MALFORMED_REQUEST too,
 * with a message that names the limit rather than the 100 MB file limit.
 */
export function jsonBody(limitBytes = 1024 * 1024): Middleware {
  return koaBody({
    multipart: false,
    urlencoded: false,
    text: false,
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    onError: (err) => {
      const status = (err as { status?: number }).status
      if (status === 413)
        throw new DomainError('MALFORMED_REQUEST', `the JSON body is larger than ${Math.floor(limitBytes / 1024)} kB`)
      throw err
    },
  })
}
