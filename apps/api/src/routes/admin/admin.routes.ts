import Router from '@koa/router'
import { addCredits, createApiKey, createWorkspace, getWorkspace, listNotifications, updateWorkspace } from '@quire/core'
import { z } from 'zod'
import type { AppDeps } from '../../http/context.ts'
import { parseInput } from '../../http/validate.ts'
import { adminAuth } from '../../middleware/authenticate.ts'

export const CreateWorkspace = z.object({
  name: z.string().min(1).max(200),
  api_form: z.enum(['A', 'B']),
  credits: z.number().int().min(0).optional(),
  spending_cap: z.number().int().min(0).nullable().optional(),
})
export const CreateKey = z.object({ scopes: z.array(z.string()).min(1), pipeline_id: z.string().min(1).optional() })
export const Grant = z.object({ amount: z.number().int().min(1) })
export const PatchWorkspace = z.object({
  spending_cap: z.number().int().min(0).nullable().optional(),
  default_pipeline_id: z.string().min(1).nullable().optional(),
})

/** Operator API: workspaces, keys and credit grants, behind the admin token. */
export function adminRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/admin/v1' })
  router.use(adminAuth(deps))
  router.post('/workspaces', async (ctx) => {
    const b = parseInput(CreateWorkspace, ctx.request.body)
    ctx.status = 201
    ctx.body = await createWorkspace({
      db: deps.db,
      name: b.name,
      apiForm: b.api_form,
      credits: b.credits,
      spendingCap: b.spending_cap,
    })
  })
  router.get('/workspaces/:id', async (ctx) => {
    ctx.body = await getWorkspace({ db: deps.db, workspaceId: ctx.params.id! })
  })
  router.patch('/workspaces/:id', async (ctx) => {
    const b = parseInput(PatchWorkspace, ctx.request.body)
    ctx.body = await updateWorkspace({
      db: deps.db,
      workspaceId: ctx.params.id!,
      spendingCap: b.spending_cap,
      defaultPipelineId: b.default_pipeline_id,
    })
  })
  router.post('/workspaces/:id/api-keys', async (ctx) => {
    const b = parseInput(CreateKey, ctx.request.body)
    ctx.status = 201
    ctx.body = await createApiKey({ db: deps.db, workspaceId: ctx.params.id!, scopes: b.scopes, pipelineId: b.pipeline_id })
  })
  router.post('/workspaces/:id/credits', async (ctx) => {
    const b = parseInput(Grant, ctx.request.body)
    ctx.body = await addCredits({ db: deps.db, workspaceId: ctx.params.id!, amount: b.amount })
  })
  router.get('/workspaces/:id/notifications', async (ctx) => {
    await getWorkspace({ db: deps.db, workspaceId: ctx.params.id! })
    ctx.body = { data: await listNotifications({ db: deps.db, workspaceId: ctx.params.id! }) }
  })
  return router
}
