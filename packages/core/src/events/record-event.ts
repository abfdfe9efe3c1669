import { newId } from '@quire/domain'
import type { Tx } from '@quire/db'
import { outbox } from '@quire/queues'

/**
 * Internal event names. They are form-neutral; the webhook dispatcher maps them to each form's wire events.
 * Do not rename: stored rows carry them.
 */
export type EventType =
  | 'job.accepted'
  | 'job.started'
  | 'stage.entered'
  | 'stage.exited'
  | 'job.finished'
  | 'document.extracted'
  | 'document.review_required'
  | 'document.reviewed'
  | 'document.quarantined'
  | 'pipeline.deployed'
  | 'job.blocked'
  | 'error_group.opened'
  | 'error_group.escalated'
  | 'error_group.resolved'

export type EventInput = {
  workspaceId: string
  type: EventType
  jobId?: string | null
  documentId?: string | null
  stage?: string | null
  transition?: 'entered' | 'exited' | null
  data?: Record<string, unknown>
}

/** Writes events and their fan-out work in the caller's transaction (transactional outbox). */
export async function recordEvents(tx: Tx, events: EventInput[]): Promise<string[]> {
  if (events.length === 0) return []
  const rows = events.map((e) => ({
    id: newId('evt'),
    workspaceId: e.workspaceId,
    type: e.type,
    jobId: e.jobId ?? null,
    documentId: e.documentId ?? null,
    stage: e.stage ?? null,
    transition: e.transition ?? null,
    data: (e.data ?? {}) as object,
  }))
  await tx.event.createMany({ data: rows })
  await outbox.fanout(
    tx,
    rows.map((r) => ({ eventId: r.id })),
  )
  return rows.map((r) => r.id)
}
