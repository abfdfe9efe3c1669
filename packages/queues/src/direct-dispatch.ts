import { setImmediate as nextTurn } from 'node:timers/promises'
import { type Db, directQuery } from '@quire/db'
import { addToQueues, type OutboxRow } from './outbox-relay.ts'
import type { QueueSet } from './queue-set.ts'

/**
 * How long the relay leaves an outbox row alone that its producer sends itself (`dispatch_after`): far longer than a
 * send and its mark take, short enough that a producer's crash delays the work by seconds only.
 */
export const DIRECT_DISPATCH_GRACE_MS = 5_000

/** How often the rows sent since the last time are marked dispatched, in one statement. */
const MARK_WINDOW_MS = 20

export type DirectDispatch = {
  /** Sends rows this process has just committed (with `dispatch_after` set) to BullMQ; never throws. */
  send(rows: readonly OutboxRow[]): void
  /** Waits for sends under way and marks what they sent (shutdown). */
  stop(): Promise<void>
}

/**
 * A submission's first stage goes to BullMQ from the process that committed it, one Redis round trip after the
 * commit (as a bare `queue.add` would), instead of waiting for a relay pass (its own transaction of four round
 * trips); the add starts in the event loop's next turn, after the answer the caller writes in this one. The outbox
 * row stays the guarantee: it was committed with the job, and the relay takes it over once its `dispatch_after`
 * passes, so a crash between the commit and the send delays the stage by DIRECT_DISPATCH_GRACE_MS and loses
 * nothing. Sent rows are marked dispatched together, one UPDATE per MARK_WINDOW_MS however many submissions rode
 * it. When Redis refuses, the rows are handed to the relay at once (`dispatch_after` cleared, relay kicked); when
 * PostgreSQL refuses the mark, the relay sends them again after the grace under the same deterministic job ids,
 * which BullMQ ignores while it holds the job.
 */
export function startDirectDispatch(opts: {
  db: Db
  queues: QueueSet
  kickRelay: () => void
  onError?: (err: unknown) => void
  redisTimeoutMs?: number
}): DirectDispatch {
  const inFlight = new Set<Promise<void>>()
  let sent: bigint[] = []
  let markTimer: NodeJS.Timeout | null = null
  let marking: Promise<void> = Promise.resolve()

  const mark = () => {
    markTimer = null
    const ids = sent
    sent = []
    if (ids.length === 0) return
    marking = marking.then(() =>
      directQuery(opts.db, {
        name: 'outbox_mark_sent',
        text: 'UPDATE outbox SET dispatched_at = now() WHERE id = ANY($1::bigint[]) AND dispatched_at IS NULL',
        values: [ids.map(String)],
      }).then(
        () => {},
        (err) => opts.onError?.(err),
      ),
    )
  }
  const handToRelay = async (ids: bigint[]) => {
    try {
      await opts.db.$executeRaw`
        UPDATE outbox SET dispatch_after = NULL WHERE id = ANY(${ids}::bigint[]) AND dispatched_at IS NULL`
    } catch (err) {
      opts.onError?.(err) // the relay takes them once the grace has passed
    }
    opts.kickRelay()
  }
  return {
    send(rows) {
      if (rows.length === 0) return
      const ids = rows.map((r) => r.id)
      // In the event loop's next turn (after the I/O callbacks of this one): the caller answers its client in this
      // one, and BullMQ's add (the job's serialisation and its script call) would otherwise run before that answer
      // is written.
      const p = nextTurn()
        .then(() => addToQueues(opts.queues, rows, opts.redisTimeoutMs ?? 4000))
        .then(
          () => {
            sent.push(...ids)
            markTimer ??= setTimeout(mark, MARK_WINDOW_MS)
          },
          (err) => {
            opts.onError?.(err)
            return handToRelay(ids)
          },
        )
      inFlight.add(p)
      void p.finally(() => inFlight.delete(p))
    },
    async stop() {
      await Promise.all(inFlight)
      if (markTimer) clearTimeout(markTimer)
      mark()
      await marking
    },
  }
}
