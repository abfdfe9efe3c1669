import { DeliveryPayload, deliveryIdsOf } from '@quire/queues'
import type { Job } from 'bullmq'
import { deliverAttempt, type DeliveryDeps } from '../use-cases/deliver-attempt.ts'

export const createDeliveryProcessor = (deps: DeliveryDeps) => async (job: Job) => {
  const payload = DeliveryPayload.parse(job.data)
  const ids = deliveryIdsOf(payload)
  if (ids.length === 1) return deliverAttempt(deps, { deliveryId: ids[0]!, attempt: payload.attempt })
  // A group (a fan-out's first attempts): each delivery is its own attempt, with its own outcome and retries. Every one
  // runs to its end before an error fails the job, so a redelivered job finds the others recorded and skips them.
  const outcomes = await Promise.allSettled(
    ids.map((deliveryId) => deliverAttempt(deps, { deliveryId, attempt: payload.attempt })),
  )
  const failed = outcomes.find((o) => o.status === 'rejected')
  if (failed) throw failed.reason
  const counts: Record<string, number> = {}
  for (const o of outcomes) if (o.status === 'fulfilled') counts[o.value] = (counts[o.value] ?? 0) + 1
  return counts
}
