import type { RawSql } from '@quire/db'
import { outbox, type Priority } from '@quire/queues'

/** The stages a job runs again for the documents decided after they ran (review.hold `document`). */
const AFTER_REVIEW_STAGES = ['post_processing', 'destination']

/**
 * Queues post_processing again for a job whose post_processing and destination already ran while some of its
 * documents were parked, now that none is (a `partial` job resuming, or one whose documents were decided while it
 * still ran them). Their runs are deleted, so the stages run rather than read as done, and the message has a queue id
 * of its own (`run`). Both stages take only the documents not delivered yet (their writes and history lines), while
 * the destination file, named by the job, is written again from every delivered document. The job then finishes,
 * settles and sends job.completed once, as a job that waited `awaiting_review` does. Call under the job's row lock,
 * in the transaction that moves it.
 */
export async function rerunAfterReview(tx: RawSql, opts: { jobId: string; priority: string }) {
  await tx.$executeRaw`DELETE FROM stage_runs WHERE job_id = ${opts.jobId} AND stage = ANY(${AFTER_REVIEW_STAGES})`
  await outbox.stage(
    tx,
    { stage: 'post_processing', jobId: opts.jobId, run: Date.now() },
    { priority: (opts.priority as Priority) ?? 'standard' },
  )
}
