import Router from '@koa/router'
import { cancelJob, getJob, listJobs } from '@quire/core'
import { DomainError, JOB_STATUSES } from '@quire/domain'
import { parseInclude, presentFormAJob, presentFormBJob } from '@quire/forms'
import { z } from 'zod'
import type { AppDeps, AppState, Ctx } from '../../http/context.ts'
import { jsonBody } from '../../http/json-body.ts'
import { multipartBody } from '../../http/multipart.ts'
import { first, parseInput } from '../../http/validate.ts'
import { requireScope } from '../../middleware/authenticate.ts'
import { createBucketSources } from '@quire/storage'
import { submitFormA } from './submit-form-a.ts'
import { submitFormAJson } from './submit-form-a-json.ts'
import { submitFormB } from './submit-form-b.ts'

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).optional(),
  status: z
    .string()
    .transform((s) => s.split(','))
    .pipe(z.array(z.enum(JOB_STATUSES)))
    .optional(),
  pipeline_id: z.string().optional(),
  source_tag: z.string().optional(),
  environment: z.enum(['production', 'test']).optional(),
  created_after: z.iso.datetime({ offset: true }).transform((s) => new Date(s)).optional(),
  created_before: z.iso.datetime({ offset: true }).transform((s) => new Date(s)).optional(),
})

export function jobRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  const present = (ctx: Ctx, job: Awaited<ReturnType<typeof getJob>>) =>
    ctx.state.principal.apiForm === 'A'
      ? presentFormAJob(job)
      : presentFormBJob(job, parseInclude(first(ctx.query.include)))

  const multipart = multipartBody(deps)
  const json = jsonBody()
  const buckets = createBucketSources(deps.config.buckets)
  // Form A also takes application/json referencing objects in connected buckets; everything else is multipart.
  router.post('/v1/jobs', requireScope('jobs:write'), async (ctx) => {
    const formA = ctx.state.principal.apiForm === 'A'
    if (formA && ctx.is('application/json')) return json(ctx, () => submitFormAJson(ctx as Ctx, deps, buckets))
    if (!ctx.is('multipart/form-data')) {
      throw new DomainError(
        'UNSUPPORTED_MEDIA_TYPE',
        formA ? 'send files as multipart/form-data, or application/json referencing objects in a connected bucket' : 'send files as multipart/form-data',
      )
    }
    return multipart(ctx, () => (formA ? submitFormA(ctx as Ctx, deps) : submitFormB(ctx as Ctx, deps)))
  })

  router.get('/v1/jobs', requireScope('jobs:read'), async (ctx) => {
    const q = parseInput(ListQuery, Object.fromEntries(Object.entries(ctx.query).map(([k, v]) => [k, first(v)])))
    const page = await listJobs({
      db: deps.db,
      workspaceId: ctx.state.principal.workspaceId,
      limit: q.limit,
      cursor: q.cursor,
      filters: {
        status: q.status,
        pipelineId: q.pipeline_id,
        sourceTag: q.source_tag,
        environment: q.environment,
        createdAfter: q.created_after,
        createdBefore: q.created_before,
      },
    })
    ctx.body = {
      data: page.data.map((j) => present(ctx as Ctx, j)),
      page: { next_cursor: page.nextCursor, has_more: page.hasMore },
    }
  })

  router.get('/v1/jobs/:jobId', requireScope('jobs:read'), async (ctx) => {
    const job = await getJob({ db: deps.db, workspaceId: ctx.state.principal.workspaceId, jobId: ctx.params.jobId! })
    ctx.body = present(ctx as Ctx, job)
  })

  router.post('/v1/jobs/:jobId/cancel', requireScope('jobs:cancel'), async (ctx) => {
    const job = await cancelJob({ db: deps.db, workspaceId: ctx.state.principal.workspaceId, jobId: ctx.params.jobId! })
    ctx.body = present(ctx as Ctx, job)
  })

  return router
}
