import Router from '@koa/router'
import { getDocument } from '@quire/core'
import { getBalance, listLedgerEntries } from '@quire/ledger'
import { z } from 'zod'
import type { AppDeps, AppState } from '../../http/context.ts'
import { first, parseInput } from '../../http/validate.ts'
import { requireScope } from '../../middleware/authenticate.ts'

export const LedgerQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).optional(),
  job_id: z.string().min(1).optional(),
  kind: z.enum(['grant', 'reserve', 'settle', 'release', 'void', 'expire']).optional(),
})

export function creditAndDocumentRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  router.get('/v1/credits', requireScope('credits:read'), async (ctx) => {
    ctx.body = await getBalance(deps.db, ctx.state.principal.workspaceId)
  })
  // The workspace's ledger entries, newest first, paged like GET /v1/jobs.
  router.get('/v1/credits/ledger', requireScope('credits:read'), async (ctx) => {
    const q = parseInput(LedgerQuery, Object.fromEntries(Object.entries(ctx.query).map(([k, v]) => [k, first(v)])))
    const page = await listLedgerEntries(deps.db, {
      workspaceId: ctx.state.principal.workspaceId,
      limit: q.limit,
      cursor: q.cursor,
      jobId: q.job_id,
      kind: q.kind,
    })
    ctx.body = { data: page.data, page: { next_cursor: page.nextCursor, has_more: page.hasMore } }
  })
  router.get('/v1/documents/:id', requireScope('documents:read'), async (ctx) => {
    ctx.body = await getDocument({ db: deps.db, workspaceId: ctx.state.principal.workspaceId, documentId: ctx.params.id! })
  })
  return router
}
