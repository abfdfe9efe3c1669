import { createHash } from 'node:crypto'
import { WORKER_STAGES, type WorkerStage } from '@quire/domain'
import { z } from 'zod'

/**
 * Every queue Quire uses, with the payload each carries. Producers and consumers import this one object.
 * Do not rename queue values: jobs already in Redis carry them.
 * Payloads carry ids only; workers reload state from PostgreSQL.
 */
export const StageJobPayload = z.object({ jobId: z.string().min(1) })
export type StageJobPayload = z.infer<typeof StageJobPayload>

/** One event, or the events one outbox write named (a transaction's events are fanned out together). */
export const FanoutPayload = z.union([
  z.object({ eventId: z.string().min(1) }),
  z.object({ eventIds: z.array(z.string().min(1)).min(1) }),
])
export type FanoutPayload = z.infer<typeof FanoutPayload>

/** The events a fan-out job names. */
export const fanoutEventIds = (p: FanoutPayload): string[] => ('eventIds' in p ? p.eventIds : [p.eventId])

/**
 * One attempt of one delivery, or the same attempt of several (the first attempts of a fan-out, sent as one job:
 * every queue job costs Redis round trips). Each delivery keeps its own id, row and retries.
 */
export const DeliveryPayload = z.union([
  z.object({ deliveryId: z.string().min(1), attempt: z.number().int().min(1) }),
  z.object({ deliveryIds: z.array(z.string().min(1)).min(1), attempt: z.number().int().min(1) }),
])
export type DeliveryPayload = z.infer<typeof DeliveryPayload>

/** The deliveries a delivery job names. */
export const deliveryIdsOf = (p: DeliveryPayload): string[] => ('deliveryIds' in p ? p.deliveryIds : [p.deliveryId])

export const stageQueueName = (stage: WorkerStage): string => `stage-${stage}`
export const FANOUT_QUEUE = 'webhook-fanout'
export const DELIVERY_QUEUE = 'webhook-delivery'

export const ALL_QUEUE_NAMES: string[] = [...WORKER_STAGES.map(stageQueueName), FANOUT_QUEUE, DELIVERY_QUEUE]

/** BullMQ runs lower numbers first; every job gets one so that `high` overtakes `standard`. */
export const PRIORITY = { high: 1, standard: 10 } as const
export type Priority = keyof typeof PRIORITY

/** One unit of queued work as BullMQ receives it. */
export type QueueAddress<Payload> = { queue: string; name: string; jobKey: string; payload: Payload }

/**
 * A kind of queued work: the schema its consumer parses, and how a producer's input becomes queue, job name,
 * deterministic BullMQ id and payload. `address` must return what `payload` accepts, so the two cannot drift.
 */
export type CatalogEntry<Input, Payload> = {
  payload: z.ZodType<Payload>
  address(input: Input): QueueAddress<Payload>
}
export type CatalogInput<E> = E extends CatalogEntry<infer Input, unknown> ? Input : never

const entry = <Input, Payload>(e: CatalogEntry<Input, Payload>) => e

/** A group job's id names its first member and a digest of all of them: the same group always gets the same id. */
const groupDigest = (ids: readonly string[]) => createHash('sha256').update(ids.join('|')).digest('hex').slice(0, 16)

/** What a producer names to queue a stage: the payload only carries the job id, the stage picks the queue. */
export type StageJobInput = { stage: WorkerStage } & StageJobPayload & {
    /** A deliberate re-run of a stage already queued once (an error group's retry or rerun): its own BullMQ id. */
    run?: number
  }

/**
 * The queue catalog. Job ids are deterministic so a repeated write (relay retry, crash, requeue sweep) is a no-op
 * while BullMQ still holds the job; BullMQ forbids ':' in custom ids.
 */
export const QUEUE_CATALOG = {
  stage: entry({
    payload: StageJobPayload,
    address: ({ stage, jobId, run }: StageJobInput) => ({
      queue: stageQueueName(stage),
      name: stage,
      jobKey: run ? `${jobId}.${stage}.r${run}` : `${jobId}.${stage}`,
      payload: { jobId },
    }),
  }),
  fanout: entry({
    payload: FanoutPayload,
    address: (input: FanoutPayload) => {
      const ids = fanoutEventIds(input)
      return {
        queue: FANOUT_QUEUE,
        name: 'fanout',
        jobKey: ids.length === 1 ? `fanout.${ids[0]}` : `fanout.${ids[0]}.${groupDigest(ids)}`,
        payload: ids.length === 1 ? { eventId: ids[0]! } : { eventIds: ids },
      }
    },
  }),
  delivery: entry({
    payload: DeliveryPayload,
    address: (input: DeliveryPayload) => {
      const ids = deliveryIdsOf(input)
      const { attempt } = input
      return {
        queue: DELIVERY_QUEUE,
        name: 'deliver',
        jobKey: ids.length === 1 ? `${ids[0]}.a${attempt}` : `${ids[0]}.a${attempt}.${groupDigest(ids)}`,
        payload: ids.length === 1 ? { deliveryId: ids[0]!, attempt } : { deliveryIds: ids, attempt },
      }
    },
  }),
}
export type QueueCatalog = typeof QUEUE_CATALOG

/** Deterministic BullMQ job ids, read from the catalog (for code that looks jobs up in BullMQ). */
export const jobKeys = {
  stage: (jobId: string, stage: WorkerStage) => QUEUE_CATALOG.stage.address({ jobId, stage }).jobKey,
  /** The job of one event fanned out alone. */
  fanout: (eventId: string) => QUEUE_CATALOG.fanout.address({ eventId }).jobKey,
  /** The job of one attempt of one delivery sent alone. */
  delivery: (deliveryId: string, attempt: number) => QUEUE_CATALOG.delivery.address({ deliveryId, attempt }).jobKey,
}
