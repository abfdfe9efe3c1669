import Koa from 'koa'
import Router from '@koa/router'
import type { AppDeps, AppState } from './http/context.ts'
import { adminAuth, authenticate } from './middleware/authenticate.ts'
import { ledgerMetrics } from '@quire/ledger'
import { errorHandler } from './middleware/error-handler.ts'
import { adminRoutes } from './routes/admin/admin.routes.ts'
import { documentReviewRoutes } from './routes/documents/review-document.route.ts'
import { jobRoutes } from './routes/jobs/jobs.routes.ts'
import { creditAndDocumentRoutes } from './routes/misc/credits-documents.routes.ts'
import { openApiRoutes } from './routes/misc/openapi.routes.ts'
import { pipelineRoutes } from './routes/pipelines/pipelines.routes.ts'
import { webhookRoutes } from './routes/webhooks/webhooks.routes.ts'
import { koaBody } from 'koa-body'
import { DomainError } from '@quire/domain'

/** Builds the Koa app; `extra` mounts operator pieces such as the queue dashboard. */
export function createApp(deps: AppDeps, extra: Koa.Middleware[] = []): Koa {
  const app = new Koa({ proxy: true })
  // Errors Koa reports outside the middleware chain are client-side (aborted or malformed requests); the
  // response, if any, was already sent by the error handler.
  app.on('error', (err: Error) => deps.log.debug({ err }, 'request stream error'))
  app.use(errorHandler(deps.log))
  for (const m of extra) app.use(m)

  const open = new Router()
  open.get('/healthz', async (ctx) => {
    await deps.db.$queryRaw`SELECT 1`
    ctx.body = { ok: true }
  })
  // Prometheus metrics (ledger drift and hold anomalies), for operators: behind the admin token.
  const ledger = ledgerMetrics(deps.db)
  open.get('/metrics', adminAuth(deps), async (ctx) => {
    ctx.type = ledger.contentType
    ctx.body = await ledger.metrics()
  })
  app.use(open.routes())

  // JSON bodies for everything but job submission, which streams multipart itself.
  const json = koaBody({ multipart: false, urlencoded: false, text: false, json: true, jsonLimit: '1mb' })
  app.use(async (ctx, next) => (ctx.path === '/v1/jobs' && ctx.method === 'POST' ? next() : json(ctx, next)))

  app.use(adminRoutes(deps).routes())
  // Before the authenticated /v1 router: the API description is served without a key (?form=A|B).
  app.use(openApiRoutes(deps).routes())

  const v1 = new Router<AppState>()
  v1.use('/v1', authenticate(deps))
  for (const r of [jobRoutes(deps), pipelineRoutes(deps), webhookRoutes(deps), creditAndDocumentRoutes(deps), documentReviewRoutes(deps)]) {
    v1.use(r.routes(), r.allowedMethods())
  }
  app.use(v1.routes())
  app.use(async (ctx) => {
    if (ctx.status === 404 && !ctx.body) throw new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`)
  })
  return app
}
