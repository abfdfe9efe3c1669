import { DomainError } from '@quire/domain'
import type { Db } from '@quire/db'

/** A document with its lineage and event history; documents of expired jobs are gone. */
export async function getDocument(opts: { db: Db; workspaceId: string; documentId: string }) {
  const d = await opts.db.document.findUnique({
    where: { id: opts.documentId },
    include: { job: { select: { workspaceId: true } }, events: { orderBy: { createdAt: 'asc' } } },
  })
  if (!d || d.job.workspaceId !== opts.workspaceId)
    throw new DomainError('not_found', `document ${opts.documentId} not found`)
  const children = await opts.db.document.findMany({
    where: { parentId: d.id },
    select: { id: true },
    orderBy: { id: 'asc' },
  })
  return {
    id: d.id,
    status: d.status,
    job_id: d.jobId,
    parent_id: d.parentId,
    children: children.map((c) => c.id),
    type: d.type,
    schema_id: d.schemaId,
    pages: d.pages,
    metadata: d.metadata ?? {},
    data: d.data ?? {},
    events: d.events.map((e) => ({ type: e.type, data: e.data ?? {}, at: e.createdAt.toISOString() })),
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  }
}
