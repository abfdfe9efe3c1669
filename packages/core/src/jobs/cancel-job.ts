import { DomainError, isFinalStatus } from '@quire/domain'
import type { Db } from '@quire/db'
import { voidCredits } from '@quire/ledger'
import { leaveErrorGroupInTx } from './error-groups.ts'
import { endOpenDocuments, lockJob, transitionJob } from './job-transitions.ts'
import { getJob } from './read-jobs.ts'

/**
 * Cancels a job that has not finished. Workers notice at their next stage boundary and discard their work; the
 * whole hold is released, and documents still in processing or in review become `cancelled`. No event is emitted for
 * cancellation.
 */
export async function cancelJob(opts: { db: Db; workspaceId: string; jobId: string }) {
  await getJob(opts)
  await opts.db.$transaction(async (tx) => {
    const status = await lockJob(tx, opts.jobId)
    if (!status) throw new DomainError('job_not_found', `job ${opts.jobId} not found`)
    if (isFinalStatus(status)) throw new DomainError('JOB_NOT_CANCELLABLE', `job is already ${status}`)
    await transitionJob(tx, {
      jobId: opts.jobId,
      from: status,
      to: 'cancelled',
      data: { completedAt: new Date(), stageNow: null, creditsUsed: 0 },
    })
    await tx.stageRun.updateMany({
      where: { jobId: opts.jobId, status: 'running' },
      data: { status: 'failed', error: 'cancelled', completedAt: new Date() },
    })
    await endOpenDocuments(tx, opts.jobId, { status: 'cancelled' })
    await voidCredits(tx, { jobId: opts.jobId })
    // A cancelled blocked job leaves its error group (the last one out resolves it).
    await leaveErrorGroupInTx(tx, await tx.job.findUniqueOrThrow({ where: { id: opts.jobId } }))
  })
  return getJob(opts)
}
