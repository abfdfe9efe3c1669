import Koa from 'koa'
import Router from '@koa/router'
import type { AppDeps, AppState } from './http/context.ts'
import { authenticate } from './middleware/authenticate.ts'
import { errorHandler } from './middleware/error-handler.ts'
import { adminRoutes } from './routes/admin/admin.routes.ts'
import { jobRoutes } from './routes/jobs/jobs.routes.ts'
import { creditAndDocumentRoutes } from './routes/misc/credits-documents.routes.ts'
import { pipelineRoutes } from './routes/pipelines/pipelines.routes.ts'
import { webhookRoutes } from './routes/webhooks/webhooks.routes.ts'
import { koaBody } from 'koa-body'
import { DomainError } from '@quire/domain'

/** Builds the Koa app; `extra` mounts operator pieces such as the queue dashboard. */
export function createApp(deps: AppDeps, extra: Koa.Middleware[] = []): Koa {
  const app = new Koa({ proxy: true })
  app.use(errorHandler(deps.log))
  for (const m of extra) app.use(m)

  const open = new Router()
  open.get('/healthz', async (ctx) => {
    await deps.db.$queryRaw`SELECT 1`
    ctx.body = { ok: true }
  })
  app.use(open.routes())

  // JSON bodies for everything but job submission, which streams multipart itself.
  const json = koaBody({ multipart: false, urlencoded: false, text: false, json: true, jsonLimit: '1mb' })
  app.use(async (ctx, next) => (ctx.path === '/v1/jobs' && ctx.method === 'POST' ? next() : json(ctx, next)))

  app.use(adminRoutes(deps).routes())

  const v1 = new Router<AppState>()
  v1.use('/v1', authenticate(deps))
  for (const r of [jobRoutes(deps), pipelineRoutes(deps), webhookRoutes(deps), creditAndDocumentRoutes(deps)]) {
    v1.use(r.routes(), r.allowedMethods())
  }
  app.use(v1.routes())
  app.use(async (ctx) => {
    if (ctx.status === 404 && !ctx.body) throw new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`)
  })
  return app
}
