import { DomainError } from '@quire/domain'
import Koa from 'koa'
import type { AppDeps } from './http/context.ts'
import { mountRoutes } from './http/mount-routes.ts'
import { docsAssets } from './openapi/docs-page.ts'
import { errorHandler } from './middleware/error-handler.ts'
import { requestId } from './middleware/request-id.ts'
import { ROUTES } from './routes/registry.ts'
import type { RouteSpec } from './routes/route.ts'

/** Builds the Koa app from the route registry; `extra` mounts operator pieces such as the queue dashboard. */
export function createApp(deps: AppDeps, extra: Koa.Middleware[] = [], routes: readonly RouteSpec[] = ROUTES): Koa {
  // A client's X-Forwarded-* headers name the origin of the absolute URLs in answers only behind a proxy the operator
  // declared (QUIRE_TRUST_PROXY); otherwise any client could point another's links elsewhere.
  const app = new Koa({ proxy: deps.config.trustProxy })
  // Errors Koa reports outside the middleware chain are client-side (aborted or malformed requests); the
  // response, if any, was already sent by the error handler.
  app.on('error', (err: Error) => deps.log.debug({ err }, 'request stream error'))
  app.use(requestId())
  app.use(errorHandler(deps.log))
  for (const m of extra) app.use(m)
  // The files the /docs route's page loads (Swagger UI and its start script), from this API, never a CDN.
  app.use(docsAssets())
  // Anything no route answered is a flat 404, and a path served with other methods a 405 whose `Allow` header (set
  // by the router below) lists them (RFC 9110); wrapped around the router so that it decides first.
  app.use(async (ctx, next) => {
    await next()
    if (ctx.body) return
    if (ctx.status === 404) throw new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`)
    if (ctx.status === 405) throw new DomainError('METHOD_NOT_ALLOWED', 'this path does not take that method')
    if (ctx.status === 501) throw new DomainError('METHOD_NOT_ALLOWED', 'this method is not supported')
  })
  const router = mountRoutes(deps, routes)
  app.use(router.routes())
  app.use(router.allowedMethods())
  return app
}
