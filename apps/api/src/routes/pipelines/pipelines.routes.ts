import Router from '@koa/router'
import { createPipeline, createPipelineVersion, getPipeline, listPipelines, publishPipelineVersion } from '@quire/core'
import { DomainError } from '@quire/domain'
import { presentPipeline } from '@quire/forms'
import { z } from 'zod'
import type { AppDeps, AppState } from '../../http/context.ts'
import { PageQuery, parseInput, first } from '../../http/validate.ts'
import { requireScope } from '../../middleware/authenticate.ts'

export const CreatePipeline = z.object({ name: z.string().min(1).max(200), definition: z.unknown().optional() })
export const CreateVersion = z.object({ definition: z.unknown().optional() })

export function pipelineRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  const ws = (ctx: { state: AppState }) => ctx.state.principal.workspaceId
  const form = (ctx: { state: AppState }) => ctx.state.principal.apiForm

  router.post('/v1/pipelines', requireScope('pipelines:write'), async (ctx) => {
    const b = parseInput(CreatePipeline, ctx.request.body)
    ctx.status = 201
    ctx.body = presentPipeline(
      await createPipeline({ db: deps.db, workspaceId: ws(ctx), name: b.name, definition: b.definition ?? {} }),
      form(ctx),
    )
  })
  router.post('/v1/pipelines/:id/versions', requireScope('pipelines:write'), async (ctx) => {
    const b = parseInput(CreateVersion, ctx.request.body)
    const p = await createPipelineVersion({
      db: deps.db,
      workspaceId: ws(ctx),
      pipelineId: ctx.params.id!,
      definition: b.definition ?? {},
    })
    ctx.status = 201
    ctx.body = { ...presentPipeline(p, form(ctx)), version: form(ctx) === 'A' ? `v${p.version}` : p.version }
  })
  router.post('/v1/pipelines/:id/versions/:n/publish', requireScope('pipelines:write'), async (ctx) => {
    const n = /^v?(\d{1,9})$/.exec(ctx.params.n!)
    if (!n) throw new DomainError('VERSION_NOT_FOUND', `no version ${ctx.params.n}`)
    ctx.body = presentPipeline(
      await publishPipelineVersion({ db: deps.db, workspaceId: ws(ctx), pipelineId: ctx.params.id!, version: Number(n[1]) }),
      form(ctx),
    )
  })
  router.get('/v1/pipelines', requireScope('pipelines:read'), async (ctx) => {
    const q = parseInput(PageQuery, { page: first(ctx.query.page), page_size: first(ctx.query.page_size) })
    const res = await listPipelines({ db: deps.db, workspaceId: ws(ctx), page: q.page, pageSize: q.page_size })
    ctx.body = {
      data: res.data.map((p) => presentPipeline(p, form(ctx))),
      page: { page: q.page, page_size: q.page_size, total: res.total },
    }
  })
  router.get('/v1/pipelines/:id', requireScope('pipelines:read'), async (ctx) => {
    ctx.body = presentPipeline(await getPipeline({ db: deps.db, workspaceId: ws(ctx), pipelineId: ctx.params.id! }), form(ctx))
  })
  return router
}
