import { DomainError, newId } from '@quire/domain'
import type { Db } from '@quire/db'
import { recordEvents } from '../events/record-event.ts'

export type ReviewAction = 'approve' | 'reject' | 'escalate'

const STATUS_AFTER: Record<ReviewAction, string> = { approve: 'completed', reject: 'rejected', escalate: 'escalated' }

/**
 * A reviewer's decision on a document parked for review. Approve may carry corrected values, which replace the
 * extracted ones with full confidence; escalated documents can still be approved or rejected later.
 */
export async function reviewDocument(opts: {
  db: Db
  workspaceId: string
  documentId: string
  action: ReviewAction
  corrections?: Record<string, string | number | null>
}) {
  await opts.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ status: string; data: unknown; job_id: string }[]>`
      SELECT d.status, d.data, d.job_id FROM documents d JOIN jobs j ON j.id = d.job_id
      WHERE d.id = ${opts.documentId} AND j.workspace_id = ${opts.workspaceId} FOR UPDATE OF d`
    const doc = rows[0]
    if (!doc) throw new DomainError('not_found', `document ${opts.documentId} not found`)
    if (doc.status !== 'in_review' && doc.status !== 'escalated') {
      throw new DomainError('DOCUMENT_NOT_IN_REVIEW', `document is ${doc.status}, not in review`)
    }
    const data = { ...((doc.data as Record<string, unknown>) ?? {}) }
    for (const [field, value] of Object.entries(opts.corrections ?? {})) data[field] = { value, confidence: 1 }
    await tx.document.update({
      where: { id: opts.documentId },
      data: { status: STATUS_AFTER[opts.action], data: data as object },
    })
    await tx.documentEvent.create({
      data: {
        id: newId('dev'),
        documentId: opts.documentId,
        type: `review_${opts.action}`,
        data: { corrected: Object.keys(opts.corrections ?? {}) },
      },
    })
    await recordEvents(tx, [
      {
        workspaceId: opts.workspaceId,
        type: 'document.reviewed',
        jobId: doc.job_id,
        documentId: opts.documentId,
        data: { action: opts.action },
      },
    ])
  })
}
