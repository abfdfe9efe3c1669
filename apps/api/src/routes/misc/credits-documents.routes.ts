import Router from '@koa/router'
import { getDocument } from '@quire/core'
import { getBalance } from '@quire/ledger'
import type { AppDeps, AppState } from '../../http/context.ts'
import { requireScope } from '../../middleware/authenticate.ts'

export function creditAndDocumentRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>()
  router.get('/v1/credits', requireScope('credits:read'), async (ctx) => {
    ctx.body = await getBalance(deps.db, ctx.state.principal.workspaceId)
  })
  router.get('/v1/documents/:id', requireScope('documents:read'), async (ctx) => {
    ctx.body = await getDocument({ db: deps.db, workspaceId: ctx.state.principal.workspaceId, documentId: ctx.params.id! })
  })
  return router
}
