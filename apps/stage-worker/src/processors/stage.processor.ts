import { failJob, runStage, type StageDeps } from '@quire/core'
import { isDomainError, type WorkerStage } from '@quire/domain'
import { StageJobPayload } from '@quire/queues'
import type { Job } from 'bullmq'
import type { Logger } from 'pino'

/**
 * One processor per stage queue: parse the payload, run the stage. A domain error is permanent; anything else is
 * retried by BullMQ until the attempts are spent, and then the job fails with its whole hold released.
 */
export function createStageProcessor(deps: StageDeps & { log: Logger }, stage: WorkerStage) {
  return async (job: Job) => {
    const { jobId } = StageJobPayload.parse(job.data)
    try {
      const result = await runStage(deps, { jobId, stage })
      deps.log.debug({ jobId, stage, result }, 'stage run')
      return result
    } catch (err) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
      if (!isDomainError(err) && !lastAttempt) throw err
      deps.log.warn({ err, jobId, stage }, 'stage failed for good; failing the job')
      await failJob(deps, {
        jobId,
        stage,
        code: isDomainError(err) ? err.code : 'stage_error',
        message: (err as Error).message ?? String(err),
      })
      return 'failed'
    }
  }
}
