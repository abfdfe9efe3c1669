import { type Db, directQuery } from '@quire/db'
import { listenForOutbox, type OutboxListenOptions } from './outbox-listener.ts'
import type { OutboxRowValues } from './outbox-writer.ts'
import type { QueueSet } from './queue-set.ts'

/** A committed outbox row, as the relay (or a producer sending its own rows at once) hands it to BullMQ. */
export type OutboxRow = OutboxRowValues & { id: bigint }

/**
 * How long a relay pass holds the rows it took (`dispatch_after` moved this far ahead) while it hands them to BullMQ
 * and marks them: far longer than a pass takes (each Redis step is bounded at `redisTimeoutMs`), so no other relay
 * sends them meanwhile; if the relaying process dies before the mark, another pass takes them after it.
 */
const RELAY_LEASE_MS = 30_000

type ClaimedRow = Omit<OutboxRow, 'id'> & { id: string }

/**
 * Moves committed outbox rows to BullMQ. A pass takes its rows in one autocommit statement (SKIP LOCKED, so several
 * relays, one per process, share the work, each taking other rows) that leases them by moving `dispatch_after`
 * ahead, hands them to BullMQ in id order, then marks them dispatched in a second statement: no interactive
 * transaction held open across the Redis calls, two statements sent without Prisma instead of four through it. A row
 * is marked dispatched only after BullMQ accepted it, and the deterministic job id makes a repeat after a crash
 * harmless. When Redis refuses, the lease is dropped at once, so the next pass tries the rows again.
 */
export async function relayOutboxOnce(
  db: Db,
  queues: QueueSet,
  batchSize = 200,
  redisTimeoutMs = 4000,
): Promise<number> {
  const claimed = await directQuery<ClaimedRow>(db, {
    name: 'outbox_relay_claim',
    text: `
      UPDATE outbox SET dispatch_after = (now() AT TIME ZONE 'UTC') + make_interval(secs => $2::float8 / 1000)
      WHERE id IN (
        SELECT id FROM outbox
        WHERE dispatched_at IS NULL AND (dispatch_after IS NULL OR dispatch_after <= now() AT TIME ZONE 'UTC')
        ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id::text, queue, name, job_key, payload, priority, delay_ms, replace_finished`,
    values: [batchSize, RELAY_LEASE_MS],
  })
  if (claimed.length === 0) return 0
  const rows: OutboxRow[] = claimed.map((r) => ({ ...r, id: BigInt(r.id) }))
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const ids = rows.map((r) => r.id.toString())
  try {
    await addToQueues(queues, rows, redisTimeoutMs)
  } catch (err) {
    await directQuery(db, {
      name: 'outbox_relay_release',
      text: 'UPDATE outbox SET dispatch_after = NULL WHERE id = ANY($1::bigint[]) AND dispatched_at IS NULL',
      values: [ids],
    }).catch(() => {}) // the lease runs out instead
    throw err
  }
  await directQuery(db, {
    name: 'outbox_mark_sent',
    text: 'UPDATE outbox SET dispatched_at = now() WHERE id = ANY($1::bigint[]) AND dispatched_at IS NULL',
    values: [ids],
  })
  return rows.length
}

/**
 * Sends rows its caller has just committed straight to BullMQ, then marks them dispatched: the relay's hop (a poll or
 * a kick, a locking transaction) is skipped, and the rows stay the safety net. If this process dies or Redis refuses
 * before the mark, the rows are still pending and the relay sends them again under the same deterministic job ids,
 * which BullMQ ignores while it holds the job. A row the relay has meanwhile sent keeps the relay's mark. Throws when
 * Redis or PostgreSQL refuses; the caller then kicks the relay (or leaves the rows to its next poll).
 */
export async function dispatchOutboxRows(
  db: Db,
  queues: QueueSet,
  rows: readonly OutboxRow[],
  redisTimeoutMs = 4000,
): Promise<void> {
  if (rows.length === 0) return
  await addToQueues(queues, rows, redisTimeoutMs)
  // Without Prisma (directQuery, the prepared statement direct dispatch marks with): the webhook dispatcher marks
  // every fan-out's first attempts here.
  await directQuery(db, {
    name: 'outbox_mark_sent',
    text: 'UPDATE outbox SET dispatched_at = now() WHERE id = ANY($1::bigint[]) AND dispatched_at IS NULL',
    values: [rows.map((r) => String(r.id))],
  })
}

/** One addBulk (one Redis round trip) per queue, in row order. */
export async function addToQueues(
  queues: QueueSet,
  rows: readonly OutboxRowValues[],
  redisTimeoutMs: number,
): Promise<void> {
  const byQueue = new Map<string, OutboxRowValues[]>()
  for (const r of rows) {
    const list = byQueue.get(r.queue)
    if (list) list.push(r)
    else byQueue.set(r.queue, [r])
  }
  for (const [queue, list] of byQueue) {
    await withTimeout(redisTimeoutMs, removeFinished(queues, queue, list))
    // BullMQ waits for a connection indefinitely; bound it so a Redis outage fails the pass (rows stay) instead of
    // holding the transaction open.
    const jobs = list.map((r) => ({
      name: r.name,
      data: r.payload,
      opts: { jobId: r.job_key, priority: r.priority ?? undefined, delay: r.delay_ms ?? undefined },
    }))
    // A lone job (a submission's first stage) as one script call; addBulk wraps even one job in a MULTI.
    const q = queues.get(queue)
    const added: Promise<unknown> =
      jobs.length === 1 ? q.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts) : q.addBulk(jobs)
    await withTimeout(redisTimeoutMs, added)
  }
}

/** Clears the way for a requeue: a finished job under the same id would turn the add into a no-op. */
async function removeFinished(queues: QueueSet, queue: string, rows: OutboxRowValues[]): Promise<void> {
  for (const r of rows) {
    if (!r.replace_finished) continue
    const existing = await queues.get(queue).getJob(r.job_key)
    if (!existing) continue
    const state = await existing.getState()
    if (state === 'failed' || state === 'completed') await existing.remove()
  }
}

export type OutboxRelay = { kick(): void; stop(): Promise<void> }

const RELAY_BATCH = 200

/** Default age after which dispatched rows are deleted (`QUIRE_OUTBOX_RETENTION_MS`). */
const OUTBOX_RETENTION_MS = 3_600_000

/**
 * Polls the outbox; `kick()` runs a pass at once (called after a commit in the same process). Every
 * `pruneIntervalMs` a pass also deletes rows dispatched more than `retentionMs` ago, so the table stays bounded.
 */
export function startOutboxRelay(opts: {
  db: Db
  queues: QueueSet
  intervalMs?: number
  /** How long dispatched rows are kept (for inspection) before they are deleted. */
  retentionMs?: number
  /** How often the pruning runs. */
  pruneIntervalMs?: number
  /**
   * Also run a pass as soon as any process commits outbox rows (for these queues), instead of at the next poll:
   * for a process that relays work other processes write (the dispatcher relays the events every app records).
   */
  listen?: OutboxListenOptions
  onError?: (err: unknown) => void
}): OutboxRelay {
  const intervalMs = opts.intervalMs ?? 500
  const retentionMs = opts.retentionMs ?? OUTBOX_RETENTION_MS
  const pruneIntervalMs = opts.pruneIntervalMs ?? 60_000
  let prunedAt = 0
  let stopped = false
  let running: Promise<void> | null = null
  let again = false
  let timer: NodeJS.Timeout | null = null

  const pass = async () => {
    do {
      again = false
      try {
        // A short batch means the table was drained at that moment; rows committed since then come with their own
        // kick (`again`), so no extra empty pass is needed to find out.
        while ((await relayOutboxOnce(opts.db, opts.queues, RELAY_BATCH)) === RELAY_BATCH && !stopped) {}
      } catch (err) {
        opts.onError?.(err)
      }
      // In the same serialized pass, so pruning never overlaps a relay pass of this process.
      if (!stopped && Date.now() - prunedAt >= pruneIntervalMs) {
        prunedAt = Date.now()
        try {
          await pruneOutbox(opts.db, retentionMs)
        } catch (err) {
          opts.onError?.(err)
        }
      }
    } while (again && !stopped)
  }
  const run = () => {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = pass().finally(() => {
      running = null
    })
  }
  const schedule = () => {
    timer = setTimeout(() => {
      run()
      if (!stopped) schedule()
    }, intervalMs)
  }
  schedule()
  run()
  const listener = opts.listen ? listenForOutbox({ ...opts.listen, onRows: run, onError: opts.onError }) : null
  return {
    kick: run,
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await listener?.close()
      await running
    },
  }
}

/**
 * Deletes rows dispatched more than `olderThanMs` ago; pending rows (dispatched_at NULL) are never touched, whatever
 * their age. Deletes in batches so a large backlog (first run after an upgrade) never holds one long transaction, and
 * skips rows another process is deleting at the same moment.
 */
export async function pruneOutbox(
  db: Db,
  olderThanMs: number,
  opts: { now?: Date; batchSize?: number } = {},
): Promise<number> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - olderThanMs)
  const batchSize = opts.batchSize ?? 5000
  let deleted = 0
  for (;;) {
    const n = await db.$executeRaw`
      DELETE FROM outbox WHERE id IN (
        SELECT id FROM outbox WHERE dispatched_at IS NOT NULL AND dispatched_at < ${cutoff}
        ORDER BY dispatched_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`
    deleted += n
    if (n < batchSize) return deleted
  }
}

function withTimeout<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not accept the outbox batch within ${ms} ms`)), ms)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
