import { dependencyDown } from '@quire/runtime'
import { DelayedError, type Job } from 'bullmq'

export type Processor<R> = (job: Job, token?: string) => Promise<R>

/** How long a job waits before it tries again while a dependency is away (jittered so workers do not stampede). */
const OUTAGE_DELAY_MS = 2000

/**
 * A PostgreSQL or Redis outage is nobody's fault and says nothing about the job: the job is put back as delayed
 * (BullMQ's DelayedError, which spends no attempt) and tries again until the dependency returns. Counted as an
 * attempt, a 20-second outage would exhaust the retries and leave the job failed in BullMQ under its deterministic
 * id, where no re-enqueue can reach it.
 */
export function outageTolerant<R>(
  processor: Processor<R>,
  opts: { onOutage?: (info: { dependency: string; jobId?: string; queue: string }) => void; delayMs?: number } = {},
): Processor<R> {
  const delayMs = opts.delayMs ?? OUTAGE_DELAY_MS
  return async (job, token) => {
    try {
      return await processor(job, token)
    } catch (err) {
      const dependency = dependencyDown(err)
      if (!dependency || !token) throw err
      opts.onOutage?.({ dependency, jobId: job.id, queue: job.queueName })
      // If Redis itself is away this throws too, and BullMQ's stalled-job check hands the job out again later.
      await job.moveToDelayed(Date.now() + delayMs + Math.floor(Math.random() * delayMs), token)
      throw new DelayedError()
    }
  }
}
