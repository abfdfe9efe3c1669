import { blockJob, failJob, internalErrorMessage, isOperatorFixable, runStages, type StageDeps } from '@quire/core'
import { isDomainError, type WorkerStage } from '@quire/domain'
import { StageJobPayload } from '@quire/queues'
import type { Job } from 'bullmq'
import type { Logger } from 'pino'

/**
 * One processor per stage queue: parse the payload, run the stage and, without a queue hop, the stages after it that
 * this process also serves (`serves`; see runStages). A failure an operator can fix parks the job in
 * its error group (retried on the group's schedule, not by BullMQ); a domain error is permanent; anything else is
 * retried by BullMQ until the attempts are spent, and then the job fails with its whole hold released.
 */
export function createStageProcessor(
  deps: StageDeps & { log: Logger; errorGroupRetryScheduleMs: readonly number[] },
  queueStage: WorkerStage,
  serves: (stage: WorkerStage) => boolean = () => false,
) {
  return async (job: Job) => {
    const { jobId } = StageJobPayload.parse(job.data)
    // The stage running now: the queue's own, or one the chain went on to.
    let stage = queueStage
    try {
      const result = await runStages(deps, { jobId, stage, serves, onStage: (s) => (stage = s) })
      deps.log.debug({ jobId, queueStage, stage, result }, 'stages run')
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
        // A domain error is written for the client; anything else is Quire's fault and stays in this log line.
        message: isDomainError(err) ? err.message : internalErrorMessage(stage),
      })
      return 'failed'
    }
  }
}
