import {
  DomainError,
  endedWithoutResult,
  isFinalStatus,
  newId,
  PARKED_DOCUMENT_STATUSES,
  PipelineDefinition,
} from '@quire/domain'
import type { Db, Tx } from '@quire/db'
import { outbox, type Priority } from '@quire/queues'
import { recordEvents } from '../events/record-event.ts'
import { type Correction, correctedValues } from './corrected-values.ts'
import { documentNotFound } from './get-document.ts'
import { lockJob, transitionJob } from '../jobs/job-transitions.ts'
import { rerunAfterReview } from '../stages/rerun-after-review.ts'
import { reviewProblems } from '../stages/validate.stage.ts'

export type ReviewAction = 'approve' | 'reject' | 'escalate'

/**
 * A reviewer's decision on a document parked for review.
 * - approve: the document is done (`completed`); corrected values replace the extracted ones with full confidence.
 * - reject with corrected `data`: the corrections are validated again like the validate stage does; a document that
 *   passes goes on with the job, one that does not stays `in_review` with its new problems. Reject without data
 *   sets the document aside (`rejected`, never delivered).
 * - escalate: the document stays parked (`escalated`); it can still be approved or rejected later.
 * A job waiting in `awaiting_review`, or reading `partial` (review.hold `document`), resumes (post_processing,
 * destination, settlement) once no document of it is parked any more. A job still running its stages takes the
 * decision as well: the runner keeps it (run-stage), and goes on to finish once nothing is parked.
 */
export async function reviewDocument(opts: {
  db: Db
  workspaceId: string
  documentId: string
  action: ReviewAction
  corrections?: Readonly<Record<string, Correction>>
}) {
  await opts.db.$transaction(async (tx) => {
    const found = await tx.$queryRaw<{ job_id: string }[]>`
      SELECT d.job_id FROM documents d JOIN jobs j ON j.id = d.job_id
      WHERE d.id = ${opts.documentId} AND j.workspace_id = ${opts.workspaceId}`
    const jobId = found[0]?.job_id
    if (!jobId) throw await documentNotFound({ db: tx, workspaceId: opts.workspaceId, documentId: opts.documentId })
    // The job row first, then the document: the same order as the stage runner, so the two never deadlock.
    const jobStatus = await lockJob(tx, jobId)
    const rows = await tx.$queryRaw<{ status: string; data: unknown; schema_id: string | null }[]>`
      SELECT status, data, schema_id FROM documents WHERE id = ${opts.documentId} FOR UPDATE`
    const doc = rows[0]
    if (!doc || !jobStatus) throw new DomainError('not_found', `document ${opts.documentId} not found`)
    if (!PARKED_DOCUMENT_STATUSES.includes(doc.status)) {
      throw new DomainError('DOCUMENT_NOT_IN_REVIEW', `document is ${doc.status}, not in review`)
    }
    // A job that ended without completing (cancelled, failed, timed out) takes no more decisions: nothing of it is
    // delivered or charged any more. A completed Form A job still does (it completes while documents are in review).
    if (endedWithoutResult(jobStatus)) {
      throw new DomainError('DOCUMENT_NOT_IN_REVIEW', `the document's job is ${jobStatus}; it takes no review`)
    }
    // A job still running its stages (`processing`) takes the decision too: the stage runner re-reads its parked
    // documents under the job's lock at its next checkpoint and keeps what a reviewer decided (run-stage
    // adoptDecisions), so nothing written here is lost.
    const job = await tx.job.findUniqueOrThrow({ where: { id: jobId } })
    const definition = PipelineDefinition.parse(job.definition)
    const data = {
      ...((doc.data as Record<string, unknown>) ?? {}),
      ...correctedValues(doc.schema_id, definition, opts.corrections ?? {}),
    }
    const corrected = Object.keys(opts.corrections ?? {}).length > 0
    let status: string
    let problems: string[] = []
    if (opts.action === 'approve') status = 'completed'
    else if (opts.action === 'escalate') status = 'escalated'
    else if (!corrected) status = 'rejected'
    else {
      problems = reviewProblems({ schemaId: doc.schema_id, data }, definition)
      // A document that passes goes on with a job that waits for review (its stages take it to `completed`); a job
      // that does not wait (Form A) runs nothing more for it, so it is done now.
      status =
        problems.length > 0 ? 'in_review' : job.waitForReview && !isFinalStatus(jobStatus) ? 'processing' : 'completed'
    }
    await tx.document.update({ where: { id: opts.documentId }, data: { status, data: data as object } })
    await tx.documentEvent.create({
      data: {
        id: newId('dev'),
        documentId: opts.documentId,
        type: `review_${opts.action}`,
        data: { corrected: Object.keys(opts.corrections ?? {}), ...(problems.length ? { problems } : {}) },
      },
    })
    await recordEvents(tx, [
      {
        workspaceId: opts.workspaceId,
        type: 'document.reviewed',
        jobId,
        documentId: opts.documentId,
        data: { action: opts.action },
      },
    ])
    if (jobStatus === 'awaiting_review' || jobStatus === 'partial') {
      await resumeIfNothingParked(tx, { jobId, from: jobStatus, priority: job.priority })
    }
  })
}

/** A job waiting for review goes on with its next stage once none of its documents is parked. */
async function resumeIfNothingParked(
  tx: Tx,
  opts: { jobId: string; from: 'awaiting_review' | 'partial'; priority: string },
) {
  const parked = await tx.document.count({
    where: { jobId: opts.jobId, status: { in: [...PARKED_DOCUMENT_STATUSES] } },
  })
  if (parked > 0) return
  await transitionJob(tx, {
    jobId: opts.jobId,
    from: opts.from,
    to: 'processing',
    data: { stageNow: 'post_processing' },
  })
  // A `partial` job already ran post_processing and destination for the documents that passed: they run again.
  if (opts.from === 'partial') await rerunAfterReview(tx, opts)
  else
    await outbox.stage(
      tx,
      { stage: 'post_processing', jobId: opts.jobId },
      { priority: (opts.priority as Priority) ?? 'standard' },
    )
}
