import type { RawSql } from '@quire/db'
import {
  type CatalogEntry,
  type CatalogInput,
  type FanoutPayload,
  fanoutEventIds,
  PRIORITY,
  type Priority,
  QUEUE_CATALOG,
  type QueueCatalog,
} from './catalog.ts'

type OutboxMessage = {
  queue: string
  name: string
  jobKey: string
  payload: Record<string, unknown>
  priority?: number
  delayMs?: number
  replaceFinished?: boolean
}

/** Applies to every message of one write. */
export type EnqueueOptions = {
  priority?: Priority
  delayMs?: number
  /**
   * For a requeue of work PostgreSQL still waits for: a BullMQ job under the same id that already finished (failed
   * or completed) is stale and is replaced. Work BullMQ still holds (waiting, delayed, active) is left alone.
   */
  replaceFinished?: boolean
}

export type OutboxWrite<Input> = (tx: RawSql, work: Input | readonly Input[], opts?: EnqueueOptions) => Promise<void>

/** One typed writer per catalog entry: a payload the consumer's schema would refuse does not compile. */
export type OutboxWriters = { [K in keyof QueueCatalog]: OutboxWrite<CatalogInput<QueueCatalog[K]>> }

/**
 * The PostgreSQL notification channel an outbox write signals on commit; the payload is the queue's name.
 */
export const OUTBOX_CHANNEL = 'quire_outbox'

/**
 * Queue work is written to the outbox in the caller's transaction, so it commits (or not) together with the state
 * change that caused it. The relay moves it to BullMQ. Untyped, so not exported: producers use `outbox.<kind>`.
 */
let writes = 0

/**
 * How many outbox writes this process has made. A caller that reads it before and after its transaction knows
 * whether a relay pass after the commit can find anything: `kick` only then (a pass costs three statements).
 */
export const outboxWriteCount = () => writes

async function writeOutbox(tx: RawSql, list: readonly OutboxMessage[]): Promise<void> {
  if (list.length === 0) return
  writes++
  const rows: (OutboxRowValues & { created_at: string })[] = list.map((m) => ({
    queue: m.queue,
    name: m.name,
    job_key: m.jobKey,
    payload: m.payload,
    priority: m.priority ?? null,
    delay_ms: m.delayMs ?? null,
    replace_finished: m.replaceFinished ?? false,
    // UTC wall-clock in a `timestamp` column, as Prisma writes it (the server's now() would follow its time zone).
    created_at: new Date().toISOString(),
  }))
  // One statement: the rows, in the caller's order (the relay sends them by id), and a notification per queue.
  // PostgreSQL delivers notifications only when the transaction commits, so a listening relay in another process
  // (startOutboxRelay's `listen`) wakes exactly when there is something to send; a rollback wakes nobody.
  await tx.$executeRaw`
    WITH inserted AS (
      INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at)
      SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, o.created_at
      FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS (
        queue text, name text, job_key text, payload jsonb, priority int, delay_ms int, replace_finished boolean,
        created_at timestamp(3)))
        WITH ORDINALITY AS o(queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at, n)
      ORDER BY o.n
      RETURNING queue
    )
    SELECT pg_notify(${OUTBOX_CHANNEL}, q.queue) FROM (SELECT DISTINCT queue FROM inserted) AS q`
}

function writerFor<Input, Payload extends Record<string, unknown>>(
  entry: CatalogEntry<Input, Payload>,
): OutboxWrite<Input> {
  return (tx, work, opts = {}) => {
    const list: readonly Input[] = Array.isArray(work) ? work : [work as Input]
    return writeOutbox(
      tx,
      list.map((input) => {
        const address = entry.address(input)
        // The types rule out a wrong shape; the schema also refuses a wrong value (an empty id, attempt 0) here, at
        // the producer, instead of in a worker later.
        return {
          ...address,
          payload: entry.payload.parse(address.payload),
          priority: opts.priority ? PRIORITY[opts.priority] : undefined,
          delayMs: opts.delayMs,
          replaceFinished: opts.replaceFinished,
        }
      }),
    )
  }
}

/** An outbox row's columns as a set-based statement writes them (raw SQL that inserts the row itself). */
export type OutboxRowValues = {
  queue: string
  name: string
  job_key: string
  payload: Record<string, unknown>
  priority: number | null
  delay_ms: number | null
  replace_finished: boolean
}

/**
 * The rows `outbox.<kind>(tx, work, opts)` would write, for a caller that inserts them in one statement together
 * with the state change that causes them (still one atomic write: the transactional outbox holds). Addresses and
 * payloads come from the catalog and are checked by its schema, as the writers do.
 */
export function outboxRowsOf<K extends keyof QueueCatalog>(
  kind: K,
  work: readonly CatalogInput<QueueCatalog[K]>[],
  opts: EnqueueOptions = {},
): OutboxRowValues[] {
  const entry = QUEUE_CATALOG[kind] as unknown as CatalogEntry<CatalogInput<QueueCatalog[K]>, Record<string, unknown>>
  return work.map((input) => {
    const address = entry.address(input)
    return {
      queue: address.queue,
      name: address.name,
      job_key: address.jobKey,
      payload: entry.payload.parse(address.payload),
      priority: opts.priority ? PRIORITY[opts.priority] : null,
      delay_ms: opts.delayMs ?? null,
      replace_finished: opts.replaceFinished ?? false,
    }
  })
}

/** `outboxRowsOf('delivery', ...)`, counted as an outbox write (a relay pass after the commit can find them). */
export function deliveryOutboxRows(
  work: readonly CatalogInput<QueueCatalog['delivery']>[],
  opts: EnqueueOptions = {},
): OutboxRowValues[] {
  if (work.length > 0) writes++
  return outboxRowsOf('delivery', work, opts)
}

/**
 * Typed enqueue through the transactional outbox, one writer per queue catalog entry:
 * `outbox.stage(tx, { stage, jobId }, { priority })`, `outbox.fanout(tx, events)`,
 * `outbox.delivery(tx, { deliveryId, attempt }, { delayMs })`.
 */
export const outbox: OutboxWriters = {
  stage: writerFor(QUEUE_CATALOG.stage),
  fanout: groupedFanout(writerFor(QUEUE_CATALOG.fanout)),
  delivery: writerFor(QUEUE_CATALOG.delivery),
}

/** Most events one fan-out job names. */
const FANOUT_GROUP = 100

/**
 * The events of one write become one fan-out job (per FANOUT_GROUP events), not one job each: a fan-out is the same
 * work for one event or a hundred (its reads and its write are shared), and every queue job costs Redis round trips.
 */
function groupedFanout(write: OutboxWrite<FanoutPayload>): OutboxWrite<FanoutPayload> {
  return (tx, work, opts) => {
    const ids = (Array.isArray(work) ? work : [work as FanoutPayload]).flatMap(fanoutEventIds)
    const groups: FanoutPayload[] = []
    for (let i = 0; i < ids.length; i += FANOUT_GROUP) {
      const group = ids.slice(i, i + FANOUT_GROUP)
      groups.push(group.length === 1 ? { eventId: group[0]! } : { eventIds: group })
    }
    return write(tx, groups, opts)
  }
}
