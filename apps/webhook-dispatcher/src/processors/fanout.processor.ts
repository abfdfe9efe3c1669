import type { Db } from '@quire/db'
import { FanoutPayload, fanoutEventIds, type OutboxRow } from '@quire/queues'
import type { Job } from 'bullmq'
import { coalesce } from '../batching/coalesce.ts'
import { fanoutEvents } from '../use-cases/fanout-event.ts'

export type FanoutDeps = {
  db: Db
  publicUrl: string
  /**
   * Sends the committed first-attempt rows to BullMQ at once (dispatchOutboxRows). Without it, or when it fails,
   * `onCommit` kicks the relay, which sends them from the outbox.
   */
  dispatch?: (rows: readonly OutboxRow[]) => Promise<void>
  /** Called after a commit that queued work the relay has to send. */
  onCommit?: () => void
  onDispatchError?: (err: unknown) => void
}

/** Most events fanned out by one statement. */
const FANOUT_BATCH = 100

/** The fan-out jobs running at the same moment share one fan-out (its reads and its one write). */
export const createFanoutProcessor = (deps: FanoutDeps) => {
  const fanout = coalesce(
    async (eventIds: readonly string[]) => {
      const { deliveries, outboxRows } = await fanoutEvents(deps, eventIds)
      if (outboxRows.length > 0) await send(deps, outboxRows)
      return eventIds.map((id) => deliveries.get(id) ?? 0)
    },
    { maxBatch: FANOUT_BATCH },
  )
  return async (job: Job) => {
    const counts = await Promise.all(fanoutEventIds(FanoutPayload.parse(job.data)).map(fanout))
    return counts.reduce((a, b) => a + b, 0)
  }
}

async function send(deps: FanoutDeps, rows: readonly OutboxRow[]): Promise<void> {
  if (deps.dispatch) {
    try {
      await deps.dispatch(rows)
      return
    } catch (err) {
      // Committed rows are never lost: the relay sends them.
      deps.onDispatchError?.(err)
    }
  }
  deps.onCommit?.()
}
