import { type Job, WaitingError, type Worker } from 'bullmq'

type Processor<R> = (job: Job, token?: string, signal?: AbortSignal) => Promise<R>

const HAND_BACK = 'shutdown grace ran out'

/**
 * Lets a shutdown hand a job back instead of leaving it to stall: when the worker cancels it (`cancelAllJobs`), the
 * job goes back to waiting at once, for another process, and the work under way here is abandoned with the process.
 * Stages and deliveries are idempotent, so a job handed back mid-way is simply done again.
 */
export function handBackOnCancel<R>(
  processor: Processor<R>,
  opts: { onHandBack?: (info: { jobId?: string; queue: string }) => void } = {},
): Processor<R> {
  return async (job, token, signal) => {
    if (!signal || !token) return processor(job, token, signal)
    let onAbort = () => {}
    const cancelled = new Promise<'cancelled'>((resolve) => {
      onAbort = () => resolve('cancelled')
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    const work = processor(job, token, signal)
    try {
      const first = await Promise.race([work, cancelled])
      if (first !== 'cancelled') return first as R
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
    work.catch(() => {})
    await job.moveToWait(token)
    opts.onHandBack?.({ jobId: job.id, queue: job.queueName })
    throw new WaitingError()
  }
}

/**
 * Graceful stop: no new jobs; the jobs under way get `graceMs` to finish; then the rest are handed back (see
 * handBackOnCancel) and the workers close.
 */
export async function drainWorkers(workers: Worker[], graceMs: number): Promise<{ graceExceeded: boolean }> {
  const closing = Promise.all(workers.map((w) => w.close()))
  let timer: NodeJS.Timeout | undefined
  const graceOver = new Promise<'grace_over'>((resolve) => {
    timer = setTimeout(() => resolve('grace_over'), graceMs)
  })
  const outcome = await Promise.race([closing.then(() => 'drained' as const), graceOver])
  clearTimeout(timer)
  if (outcome === 'drained') return { graceExceeded: false }
  for (const w of workers) w.cancelAllJobs(HAND_BACK)
  await closing
  return { graceExceeded: true }
}
