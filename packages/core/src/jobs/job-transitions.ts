import { canTransition, DomainError, type JobStatus, PARKED_DOCUMENT_STATUSES } from '@quire/domain'
import type { Tx } from '@quire/db'
import type { Prisma } from '@quire/db'

/**
 * The only writer of job statuses. The update is conditional on the status read, so two processes racing (a worker
 * finishing while a client cancels) cannot both win.
 */
export async function transitionJob(
  tx: Tx,
  opts: { jobId: string; from: JobStatus; to: JobStatus; data?: Omit<Prisma.JobUpdateManyMutationInput, 'status'> },
): Promise<boolean> {
  if (!canTransition(opts.from, opts.to)) {
    throw new DomainError('JOB_NOT_CANCELLABLE', `job cannot move from ${opts.from} to ${opts.to}`)
  }
  const res = await tx.job.updateMany({
    where: { id: opts.jobId, status: opts.from },
    data: { ...opts.data, status: opts.to },
  })
  return res.count === 1
}

/** Locks the job row for the rest of the transaction and returns its current status. */
export async function lockJob(tx: Tx, jobId: string): Promise<JobStatus | null> {
  const rows = await tx.$queryRaw<
    { status: JobStatus }[]
  >`SELECT status::text AS status FROM jobs WHERE id = ${jobId} FOR UPDATE`
  return rows[0]?.status ?? null
}

/**
 * Ends the documents of a job that has just ended (cancelled, failed, timed out) which are still under way or parked
 * for review, with `set` (their final status and, for a failure, its error). Left as they were, they would read as
 * work under way, or as awaiting a decision that can no longer change anything, forever.
 */
export async function endOpenDocuments(
  tx: Tx,
  jobId: string,
  set: Pick<Prisma.DocumentUpdateManyMutationInput, 'status' | 'errorCode' | 'errorMessage'>,
): Promise<void> {
  await tx.document.updateMany({
    where: { jobId, status: { in: ['processing', ...PARKED_DOCUMENT_STATUSES] } },
    data: set,
  })
}
