import { isFinalStatus, type JobStatus } from '@quire/domain'
import type { Db } from '@quire/db'
import type { BlobStore } from '@quire/storage'
import { failJob, failJobInTx } from '../stages/run-stage.ts'
import { JOB_FILES_SELECT, jobFilesOf } from './job-files.ts'

/**
 * Retention: jobs older than `retentionMs` lose their result, documents and stored files; the job row stays so
 * reads can answer job_expired instead of job_not_found. A job still running at that age fails (`job.failed`, its
 * hold released). Rows are claimed with SKIP LOCKED, so several workers can sweep at once.
 */
export async function expireJobs(opts: { db: Db; blobs: BlobStore; retentionMs: number; now?: Date; batch?: number }) {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.retentionMs)
  const expired = await opts.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string; status: JobStatus }[]>`
      SELECT id, status::text AS status FROM jobs WHERE created_at < ${cutoff} AND expired_at IS NULL
      ORDER BY created_at LIMIT ${opts.batch ?? 100} FOR UPDATE SKIP LOCKED`
    const out: { id: string; blobKeys: string[] }[] = []
    for (const row of rows) {
      if (!isFinalStatus(row.status)) {
        // A failure like any other (spec: `job.failed`, "Job reached failed"): the event, the hold released, the
        // job out of the error group a blocked stage put it in; failed at the stage it was in (no `stage` given).
        await failJobInTx(tx, {
          jobId: row.id,
          code: 'job_expired',
          message: 'job reached retention before finishing',
        })
      }
      const job = await tx.job.findUniqueOrThrow({ where: { id: row.id }, select: JOB_FILES_SELECT })
      await tx.document.deleteMany({ where: { jobId: row.id } })
      await tx.job.update({ where: { id: row.id }, data: { expiredAt: new Date() } })
      out.push({ id: row.id, blobKeys: jobFilesOf(job).map((f) => f.blobKey) })
    }
    return out
  })
  // Files go after the commit: a crash here leaves orphans a later sweep of the blob store can remove, never a
  // job whose files vanished while it was still readable.
  for (const job of expired) for (const key of job.blobKeys) await opts.blobs.delete(key)
  return expired.length
}

/**
 * A synchronous job that is still running past its own hard limit ends as timed_out; like a failure, its whole
 * hold is released.
 */
export async function timeOutSyncJobs(opts: { db: Db; hardLimitMs: number; now?: Date; onCommit?: () => void }) {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.hardLimitMs)
  const late = await opts.db.job.findMany({
    where: {
      executionMode: 'sync',
      createdAt: { lt: cutoff },
      status: { notIn: ['completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled'] },
    },
    select: { id: true },
    take: 100,
  })
  let n = 0
  for (const job of late) {
    const changed = await failJob(
      { db: opts.db, onCommit: opts.onCommit },
      {
        jobId: job.id, // fails at the stage it is in when locked
        code: 'sync_timeout',
        message: `synchronous job exceeded its limit of ${opts.hardLimitMs} ms`,
        to: 'timed_out',
      },
    )
    if (changed) n++
  }
  return n
}
