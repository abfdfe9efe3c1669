import { z } from 'zod'
import { WORKER_STAGES, type WorkerStage } from '@quire/domain'

/**
 * Every queue Quire uses, with the payload each carries. Producers and consumers import this one object.
 * Do not rename queue values: jobs already in Redis carry them.
 * Payloads carry ids only; workers reload state from PostgreSQL.
 */
export const StageJobPayload = z.object({ jobId: z.string().min(1) })
export type StageJobPayload = z.infer<typeof StageJobPayload>

export const FanoutPayload = z.object({ eventId: z.string().min(1) })
export type FanoutPayload = z.infer<typeof FanoutPayload>

export const DeliveryPayload = z.object({ deliveryId: z.string().min(1), attempt: z.number().int().min(1) })
export type DeliveryPayload = z.infer<typeof DeliveryPayload>

export const stageQueueName = (stage: WorkerStage): string => `stage-${stage}`
export const FANOUT_QUEUE = 'webhook-fanout'
export const DELIVERY_QUEUE = 'webhook-delivery'

export const ALL_QUEUE_NAMES: string[] = [...WORKER_STAGES.map(stageQueueName), FANOUT_QUEUE, DELIVERY_QUEUE]

/** BullMQ runs lower numbers first; every job gets one so that `high` overtakes `standard`. */
export const PRIORITY = { high: 1, standard: 10 } as const
export type Priority = keyof typeof PRIORITY

/** Deterministic BullMQ job ids (BullMQ forbids ':' in custom ids). */
export const jobKeys = {
  stage: (jobId: string, stage: WorkerStage, run = 0) => (run ? `${jobId}.${stage}.r${run}` : `${jobId}.${stage}`),
  fanout: (eventId: string) => `fanout.${eventId}`,
  delivery: (deliveryId: string, attempt: number) => `${deliveryId}.a${attempt}`,
}
