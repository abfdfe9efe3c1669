import Router from '@koa/router'
import {
  createWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  setWebhookStatus,
  type WebhookView,
} from '@quire/core'
import { presentFormAWebhook, presentFormBWebhook } from '@quire/forms'
import { z } from 'zod'
import type { AppDeps, AppState } from '../../http/context.ts'
import { first, PageQuery, parseInput } from '../../http/validate.ts'
import { requireScope } from '../../middleware/authenticate.ts'
import { parseFormAWebhook, parseFormBWebhook } from './webhook-requests.ts'

export const PatchWebhook = z.object({ status: z.enum(['active']) })
export const DeliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(25) })

export function webhookRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  const ws = (ctx: { state: AppState }) => ctx.state.principal.workspaceId
  const present = (ctx: { state: AppState }, w: WebhookView, revealSecret = false) =>
    ctx.state.principal.apiForm === 'A' ? presentFormAWebhook(w, { revealSecret }) : presentFormBWebhook(w, { revealSecret })
  const write = requireScope('webhook:write', 'webhooks:write')
  const read = requireScope('webhooks:read', 'webhook:write', 'webhooks:write')

  router.post('/v1/webhooks', write, async (ctx) => {
    const parsed = ctx.state.principal.apiForm === 'A' ? parseFormAWebhook(ctx.request.body) : parseFormBWebhook(ctx.request.body)
    const w = await createWebhook({ db: deps.db, workspaceId: ws(ctx), urlPolicy: deps.config.urlPolicy, ...parsed })
    ctx.status = 201
    ctx.body = present(ctx, w, true)
  })
  router.get('/v1/webhooks', read, async (ctx) => {
    const q = parseInput(PageQuery, { page: first(ctx.query.page), page_size: first(ctx.query.page_size) })
    const res = await listWebhooks({ db: deps.db, workspaceId: ws(ctx), page: q.page, pageSize: q.page_size })
    ctx.body = { data: res.data.map((w) => present(ctx, w)), page: { page: q.page, page_size: q.page_size, total: res.total } }
  })
  router.get('/v1/webhooks/:id', read, async (ctx) => {
    ctx.body = present(ctx, await getWebhook({ db: deps.db, workspaceId: ws(ctx), webhookId: ctx.params.id! }))
  })
  router.patch('/v1/webhooks/:id', write, async (ctx) => {
    const b = parseInput(PatchWebhook, ctx.request.body)
    ctx.body = present(ctx, await setWebhookStatus({ db: deps.db, workspaceId: ws(ctx), webhookId: ctx.params.id!, status: b.status }))
  })
  router.post('/v1/webhooks/:id/rotate', write, async (ctx) => {
    const w = await rotateWebhookSecret({ db: deps.db, workspaceId: ws(ctx), webhookId: ctx.params.id! })
    ctx.body = present(ctx, w, true)
  })
  router.get('/v1/webhooks/:id/deliveries', read, async (ctx) => {
    const { limit } = parseInput(DeliveriesQuery, { limit: first(ctx.query.limit) })
    ctx.body = { data: await listDeliveries({ db: deps.db, workspaceId: ws(ctx), webhookId: ctx.params.id!, limit }) }
  })
  return router
}
