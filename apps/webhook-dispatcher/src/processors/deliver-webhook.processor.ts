import { DeliveryPayload } from '@quire/queues'
import type { Job } from 'bullmq'
import { deliverAttempt, type DeliveryDeps } from '../use-cases/deliver-attempt.ts'

export const createDeliveryProcessor = (deps: DeliveryDeps) => async (job: Job) => {
  const payload = DeliveryPayload.parse(job.data)
  return deliverAttempt(deps, payload)
}
