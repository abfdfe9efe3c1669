import { isFinalStatus, type JobStatus } from '@quire/domain'
import type { Db } from '@quire/db'

/** Waits until every job is final or the deadline passes; returns whether all finished. */
export async function awaitJobs(opts: {
  db: Db
  jobIds: string[]
  deadline: number
  pollMs?: number
}): Promise<boolean> {
  const pollMs = opts.pollMs ?? 150
  for (;;) {
    const rows = await opts.db.job.findMany({ where: { id: { in: opts.jobIds } }, select: { status: true } })
    if (rows.every((r) => isFinalStatus(r.status as JobStatus))) return true
    const left = opts.deadline - Date.now()
    if (left <= 0) return false
    await new Promise((r) => setTimeout(r, Math.min(pollMs, left)))
  }
}

/**
 * The sync window closed first: running jobs stay sync-and-running, jobs not yet started become async; both carry
 * the degradation reason and keep running.
 */
export async function degradeSyncJobs(opts: { db: Db; jobIds: string[]; reason: string }): Promise<void> {
  await opts.db.job.updateMany({
    where: { id: { in: opts.jobIds }, status: 'queued' },
    data: { degradationReason: opts.reason, executionMode: 'async' },
  })
  await opts.db.job.updateMany({
    where: {
      id: { in: opts.jobIds },
      status: { notIn: ['queued', 'completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled'] },
    },
    data: { degradationReason: opts.reason },
  })
}
