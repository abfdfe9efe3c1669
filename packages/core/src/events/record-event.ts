import { newId } from '@quire/domain'
import type { RawSql } from '@quire/db'
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
  /** When it happened, when that was earlier than the write (a run of stages writes its events at its checkpoint). */
  at?: Date
}

/** An event's row as written (every column but `fanned_out_at`, which the write decides). */
export type EventRow = ReturnType<typeof eventRow>

/** The row of one event; `now` when it says no earlier moment. */
export function eventRow(e: EventInput, now: Date) {
  return {
    id: newId('evt'),
    workspace_id: e.workspaceId,
    type: e.type,
    job_id: e.jobId ?? null,
    document_id: e.documentId ?? null,
    stage: e.stage ?? null,
    transition: e.transition ?? null,
    data: e.data ?? {},
    // Timestamps are UTC wall-clock values in `timestamp` columns, as Prisma writes them (never the server's zone).
    created_at: (e.at ?? now).toISOString(),
  }
}

/**
 * Writes events and their fan-out work in the caller's transaction (transactional outbox). An event of a workspace
 * that has no webhook at this moment can reach no receiver (a webhook created later is not owed earlier events), so
 * it is stored as already fanned out and never becomes queue work.
 */
export async function recordEvents(tx: RawSql, events: EventInput[]): Promise<string[]> {
  if (events.length === 0) return []
  const now = new Date()
  const rows = events.map((e) => eventRow(e, now))
  // One statement on the hot path (every stage records events): the webhook check happens in the INSERT itself,
  // so it sees the same webhooks a separate read in this transaction would.
  const written = await tx.$queryRaw<{ id: string; owed: boolean }[]>`
    INSERT INTO events (id, workspace_id, job_id, document_id, type, stage, transition, data, created_at, fanned_out_at)
    SELECT e.id, e.workspace_id, e.job_id, e.document_id, e.type, e.stage, e.transition, e.data, e.created_at,
           CASE WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.workspace_id = e.workspace_id) THEN NULL
                ELSE e.created_at END
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS e(
      id text, workspace_id text, job_id text, document_id text, type text, stage text, transition text, data jsonb,
      created_at timestamp(3))
    RETURNING id, fanned_out_at IS NULL AS owed`
  const owed = new Set(written.filter((r) => r.owed).map((r) => r.id))
  await outbox.fanout(
    tx,
    rows.filter((r) => owed.has(r.id)).map((r) => ({ eventId: r.id })),
  )
  return rows.map((r) => r.id)
}
