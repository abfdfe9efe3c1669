import { blockJob, failJob, isOperatorFixable, runStage, type StageDeps } from '@quire/core'
import { isDomainError, type WorkerStage } from '@quire/domain'
import { StageJobPayload } from '@quire/queues'
import type { Job } from 'bullmq'
import type { Logger } from 'pino'

/**
 * One processor per stage queue: parse the payload, run the stage. A failure an operator can fix parks the job in
 * its error group (retried on the group's schedule, not by BullMQ); a domain error is permanent; anything else is
 * retried by BullMQ until the attempts are spent, and then the job fails with its whole hold released.
 */
export function createStageProcessor(
  deps: StageDeps & { log: Logger; errorGroupRetryScheduleMs: readonly number[] },
  stage: WorkerStage,
) {
  return async (job: Job) => {
    const { jobId } = StageJobPayload.parse(job.data)
    try {
      const result = await runStage(deps, { jobId, stage })
      deps.log.debug({ jobId, stage, result }, 'stage run')
      return result
    } catch (err) {
      if (isOperatorFixable(err)) {
        deps.log.warn({ jobId, stage, code: err.code, error: err.message }, 'stage needs an operator; job blocked')
        await blockJob(deps, {
          jobId,
          stage,
          code: err.code,
          message: err.message,
          retryScheduleMs: deps.errorGroupRetryScheduleMs,
        })
        return 'blocked'
      }
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
