import type { Db } from '@quire/db'
import { FanoutPayload } from '@quire/queues'
import type { Job } from 'bullmq'
import { fanoutEvent } from '../use-cases/fanout-event.ts'

export const createFanoutProcessor =
  (deps: { db: Db; publicUrl: string; onCommit?: () => void }) => async (job: Job) => {
    const { eventId } = FanoutPayload.parse(job.data)
    const n = await fanoutEvent(deps, eventId)
    if (n > 0) deps.onCommit?.()
    return n
  }
