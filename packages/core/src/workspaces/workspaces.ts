import { DomainError, newId } from '@quire/domain'
import type { ApiForm, Db } from '@quire/db'
import { grantCredits } from '@quire/ledger'

export type WorkspaceView = {
  id: string
  name: string
  api_form: ApiForm
  spending_cap: number | null
  default_pipeline_id: string | null
  credits: { available: number; reserved: number; spent: number }
  created_at: string
}

export async function getWorkspace(opts: { db: Db; workspaceId: string }): Promise<WorkspaceView> {
  const ws = await opts.db.workspace.findUnique({ where: { id: opts.workspaceId } })
  if (!ws) throw new DomainError('not_found', 'workspace not found')
  return {
    id: ws.id,
    name: ws.name,
    api_form: ws.apiForm,
    spending_cap: ws.spendingCap,
    default_pipeline_id: ws.defaultPipelineId,
    credits: { available: ws.creditsAvailable, reserved: ws.creditsReserved, spent: ws.creditsSpent },
    created_at: ws.createdAt.toISOString(),
  }
}

export async function createWorkspace(opts: {
  db: Db
  name: string
  apiForm: ApiForm
  credits?: number
  spendingCap?: number | null
}): Promise<WorkspaceView> {
  const id = newId('ws')
  await opts.db.$transaction(async (tx) => {
    await tx.workspace.create({
      data: { id, name: opts.name, apiForm: opts.apiForm, spendingCap: opts.spendingCap ?? null },
    })
    if (opts.credits) await grantCredits(tx, { workspaceId: id, amount: opts.credits })
  })
  return getWorkspace({ db: opts.db, workspaceId: id })
}

export async function updateWorkspace(opts: {
  db: Db
  workspaceId: string
  spendingCap?: number | null
  defaultPipelineId?: string | null
}): Promise<WorkspaceView> {
  const ws = await opts.db.workspace.findUnique({ where: { id: opts.workspaceId } })
  if (!ws) throw new DomainError('not_found', 'workspace not found')
  if (opts.defaultPipelineId) {
    const p = await opts.db.pipeline.findFirst({
      where: { id: opts.defaultPipelineId, OR: [{ workspaceId: ws.id }, { workspaceId: null }] },
    })
    if (!p) throw new DomainError('PIPELINE_NOT_FOUND', `pipeline ${opts.defaultPipelineId} not found`)
  }
  await opts.db.workspace.update({
    where: { id: ws.id },
    data: {
      ...(opts.spendingCap !== undefined ? { spendingCap: opts.spendingCap } : {}),
      ...(opts.defaultPipelineId !== undefined ? { defaultPipelineId: opts.defaultPipelineId } : {}),
    },
  })
  return getWorkspace({ db: opts.db, workspaceId: ws.id })
}

export async function addCredits(opts: { db: Db; workspaceId: string; amount: number }) {
  const ws = await opts.db.workspace.findUnique({ where: { id: opts.workspaceId } })
  if (!ws) throw new DomainError('not_found', 'workspace not found')
  return opts.db.$transaction((tx) => grantCredits(tx, { workspaceId: ws.id, amount: opts.amount }))
}

export async function listNotifications(opts: { db: Db; workspaceId: string }) {
  const rows = await opts.db.notification.findMany({
    where: { workspaceId: opts.workspaceId },
    orderBy: { createdAt: 'desc' },
    take: 100,
  })
  return rows.map((n) => ({
    id: n.id,
    kind: n.kind,
    message: n.message,
    data: n.data,
    created_at: n.createdAt.toISOString(),
  }))
}
