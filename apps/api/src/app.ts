import { DomainError } from '@quire/domain'
import Koa from 'koa'
import type { AppDeps } from './http/context.ts'
import { mountRoutes } from './http/mount-routes.ts'
import { errorHandler } from './middleware/error-handler.ts'
import { ROUTES } from './routes/registry.ts'
import type { RouteSpec } from './routes/route.ts'

/** Builds the Koa app from the route registry; `extra` mounts operator pieces such as the queue dashboard. */
export function createApp(deps: AppDeps, extra: Koa.Middleware[] = [], routes: readonly RouteSpec[] = ROUTES): Koa {
  const app = new Koa({ proxy: true })
  // Errors Koa reports outside the middleware chain are client-side (aborted or malformed requests); the
  // response, if any, was already sent by the error handler.
  app.on('error', (err: Error) => deps.log.debug({ err }, 'request stream error'))
  app.use(errorHandler(deps.log))
  for (const m of extra) app.use(m)
  // Anything no route answered is a flat 404; wrapped around the router so that 405 (below) is decided first.
  app.use(async (ctx, next) => {
    await next()
    if (ctx.status === 404 && !ctx.body) throw new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`)
  })
  const router = mountRoutes(deps, routes)
  app.use(router.routes())
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new DomainError('METHOD_NOT_ALLOWED', 'this path does not take that method'),
      notImplemented: () => new DomainError('METHOD_NOT_ALLOWED', 'this method is not supported'),
    }),
  )
  return app
}
