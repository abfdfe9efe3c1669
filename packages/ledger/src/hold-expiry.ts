import type { Db } from '@quire/db'
import { voidCredits } from './ledger.ts'

/** Options for {@link expireOrphanedHolds}. */
export type ExpireHoldsOptions = {
  /** Only holds at least this old are considered (default 60 s): a margin for callers that reserve before the job row exists. */
  minAgeMs?: number
  /** Holds examined per call (default 100). */
  batch?: number
  /** Limit the sweep to one workspace (tests). */
  workspaceId?: string
}

/**
 * Expires pending holds whose job is gone: the job row was deleted, its result is past retention, or it ended
 * without completing (failed, timed out, cancelled) and its hold was somehow not voided with it, which the job's own
 * transactions never allow: this is the safety net. A completed job with a pending hold is not guessed at here; the
 * reconciliation reports it. Each expiry is the same conditional statement as a void, so a sweeper racing a
 * settlement, or another sweeper, changes nothing twice. Returns the job ids whose holds this call expired.
 */
export async function expireOrphanedHolds(db: Db, opts: ExpireHoldsOptions = {}): Promise<string[]> {
  const minAgeMs = opts.minAgeMs ?? 60_000
  const ws = opts.workspaceId ?? null
  const candidates = await db.$queryRaw<{ job_id: string }[]>`
    SELECT h.job_id FROM ledger_holds h
    LEFT JOIN jobs j ON j.id = h.job_id
    WHERE h.status = 'pending'
      AND h.created_at <= (clock_timestamp() AT TIME ZONE 'UTC') - make_interval(secs => ${minAgeMs}::int / 1000.0)
      AND (${ws}::text IS NULL OR h.workspace_id = ${ws}::text)
      AND (j.id IS NULL OR j.expired_at IS NOT NULL OR j.status IN ('failed', 'timed_out', 'cancelled'))
    ORDER BY h.created_at
    LIMIT ${opts.batch ?? 100}`
  // The conditions found above are final (a deleted job does not come back, final statuses are terminal), and the
  // expiry itself only acts on a hold that is still pending, so no lock is held between the scan and the write.
  const expired: string[] = []
  for (const { job_id } of candidates) {
    if (await voidCredits(db, { jobId: job_id, reason: 'expire' })) expired.push(job_id)
  }
  return expired
}
