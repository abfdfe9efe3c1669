import { creditsForPages, DomainError, isFinalStatus, PipelineDefinition } from '@quire/domain'
import type { Db, Tx } from '@quire/db'
import { settleCredits, voidCredits } from '@quire/ledger'
import { leaveErrorGroupInTx } from './error-groups.ts'
import { endOpenDocuments, lockJob, transitionJob } from './job-transitions.ts'
import { getJob } from './read-jobs.ts'

/**
 * Cancels a job that has not finished. Workers notice at their next stage boundary and discard their work; the
 * whole hold is released, and documents still in processing or in review become `cancelled`. A `partial` job
 * (review.hold `document`) settles what it delivered instead: only its held documents are cancelled. No event is
 * emitted for cancellation.
 */
export async function cancelJob(opts: { db: Db; workspaceId: string; jobId: string }) {
  await getJob(opts)
  await opts.db.$transaction(async (tx) => {
    const status = await lockJob(tx, opts.jobId)
    if (!status) throw new DomainError('job_not_found', `job ${opts.jobId} not found`)
    if (isFinalStatus(status)) throw new DomainError('JOB_NOT_CANCELLABLE', `job is already ${status}`)
    // A `partial` job (review.hold `document`) delivered the documents that passed: those are settled; the rest of
    // the hold, and only the held documents, are cancelled.
    const used = status === 'partial' ? await creditsOfDelivered(tx, opts.jobId) : 0
    await transitionJob(tx, {
      jobId: opts.jobId,
      from: status,
      to: 'cancelled',
      data: { completedAt: new Date(), stageNow: null, creditsUsed: used },
    })
    await tx.stageRun.updateMany({
      where: { jobId: opts.jobId, status: 'running' },
      data: { status: 'failed', error: 'cancelled', completedAt: new Date() },
    })
    await endOpenDocuments(tx, opts.jobId, { status: 'cancelled' })
    if (status === 'partial') {
      const settled = await settleCredits(tx, { jobId: opts.jobId, used })
      if (settled) await tx.job.update({ where: { id: opts.jobId }, data: { creditsUsed: settled.posted } })
    } else await voidCredits(tx, { jobId: opts.jobId })
    // A cancelled blocked job leaves its error group (the last one out resolves it).
    await leaveErrorGroupInTx(tx, await tx.job.findUniqueOrThrow({ where: { id: opts.jobId } }))
  })
  return getJob(opts)
}

/** What a `partial` job's delivered documents cost: their pages, never more than its stages charged (as settleJob). */
async function creditsOfDelivered(tx: Tx, jobId: string): Promise<number> {
  const job = await tx.job.findUniqueOrThrow({
    where: { id: jobId },
    select: { definition: true, stageRuns: { select: { credits: true } } },
  })
  const delivered = await tx.document.findMany({ where: { jobId, status: 'completed' }, select: { pages: true } })
  const charged = job.stageRuns.reduce((n, r) => n + r.credits, 0)
  const pages = delivered.reduce((n, d) => n + d.pages.length, 0)
  return Math.min(charged, creditsForPages(pages, PipelineDefinition.parse(job.definition).credits.per_page))
}
