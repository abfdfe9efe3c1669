import Router from '@koa/router'
import { getDocument, reviewDocument } from '@quire/core'
import { z } from 'zod'
import type { AppDeps, AppState } from '../../http/context.ts'
import { parseInput } from '../../http/validate.ts'
import { requireScope } from '../../middleware/authenticate.ts'

export const ReviewDocumentRequest = z.strictObject({
  action: z.enum(['approve', 'reject', 'escalate']),
  /** Corrected values by field name; they replace the extracted ones with confidence 1. */
  data: z.record(z.string().min(1), z.union([z.string(), z.number(), z.null()])).optional(),
})

export function documentReviewRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  router.post('/v1/documents/:id/review', requireScope('documents:review'), async (ctx) => {
    const b = parseInput(ReviewDocumentRequest, ctx.request.body)
    const workspaceId = ctx.state.principal.workspaceId
    await reviewDocument({ db: deps.db, workspaceId, documentId: ctx.params.id!, action: b.action, corrections: b.data })
    ctx.body = await getDocument({ db: deps.db, workspaceId, documentId: ctx.params.id! })
  })
  return router
}
