import type { Db } from '@quire/db'
import { DIRECT_DISPATCH_GRACE_MS, type DirectDispatch, FanoutPayload, fanoutEventIds } from '@quire/queues'
import type { Job } from 'bullmq'
import { coalesce } from '../batching/coalesce.ts'
import { fanoutEvents } from '../use-cases/fanout-event.ts'

export type FanoutDeps = {
  db: Db
  publicUrl: string
  /**
   * Sends the committed first-attempt rows to BullMQ at once (startDirectDispatch); they are written for it with
   * `dispatch_after`, so the relay takes them over only if they are still unmarked after DIRECT_DISPATCH_GRACE_MS.
   * Without it, `onCommit` kicks the relay, which sends them from the outbox.
   */
  direct?: Pick<DirectDispatch, 'send'>
  /** Called after a commit that queued work the relay has to send. */
  onCommit?: () => void
}

/** Most events fanned out by one statement. */
const FANOUT_BATCH = 100

/** The fan-out jobs running at the same moment share one fan-out (its reads and its one write). */
export const createFanoutProcessor = (deps: FanoutDeps) => {
  const fanout = coalesce(
    async (eventIds: readonly string[]) => {
      const { deliveries, outboxRows } = await fanoutEvents(
        { ...deps, directGraceMs: deps.direct ? DIRECT_DISPATCH_GRACE_MS : undefined },
        eventIds,
      )
      if (outboxRows.length > 0) {
        // Sent after the commit; the job does not wait for Redis: the committed rows are the guarantee.
        if (deps.direct) deps.direct.send(outboxRows)
        else deps.onCommit?.()
      }
      return eventIds.map((id) => deliveries.get(id) ?? 0)
    },
    { maxBatch: FANOUT_BATCH },
  )
  return async (job: Job) => {
    const counts = await Promise.all(fanoutEventIds(FanoutPayload.parse(job.data)).map(fanout))
    return counts.reduce((a, b) => a + b, 0)
  }
}
