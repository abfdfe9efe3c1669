import { DomainError, jobIdOfDocumentId } from '@quire/domain'
import type { Db } from '@quire/db'

/** A document with its lineage and event history; documents of expired jobs are gone (job_expired). */
export async function getDocument(opts: { db: Db; workspaceId: string; documentId: string }) {
  const d = await opts.db.document.findUnique({
    where: { id: opts.documentId },
    include: { job: { select: { workspaceId: true } }, events: { orderBy: { createdAt: 'asc' } } },
  })
  if (!d || d.job.workspaceId !== opts.workspaceId) throw await documentNotFound(opts)
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
    ...(d.status === 'failed' && d.errorCode ? { error: { code: d.errorCode, message: d.errorMessage ?? '' } } : {}),
    events: d.events.map((e) => ({ type: e.type, data: e.data ?? {}, at: e.createdAt.toISOString() })),
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  }
}

/**
 * The error for a document id that has no row in the workspace: job_expired when it names a document of the
 * workspace's job past retention (spec: "result and documents are deleted and reads return job_expired"; retention
 * deletes the rows, the id still names its job), otherwise not_found.
 */
export async function documentNotFound(opts: { db: Pick<Db, 'job'>; workspaceId: string; documentId: string }) {
  const jobId = jobIdOfDocumentId(opts.documentId)
  const job = jobId
    ? await opts.db.job.findUnique({ where: { id: jobId }, select: { workspaceId: true, expiredAt: true } })
    : null
  return job?.workspaceId === opts.workspaceId && job.expiredAt
    ? new DomainError('job_expired', `document ${opts.documentId} belongs to job ${jobId}, past retention`)
    : new DomainError('not_found', `document ${opts.documentId} not found`)
}
