import { parseDatabaseUrl } from '@quire/db'
import pg from 'pg'
import { OUTBOX_CHANNEL } from './outbox-writer.ts'

/** Options of {@link listenForOutbox}. */
export type OutboxListenOptions = {
  /** The database the outbox lives in (its `?schema=` is ignored: notifications are per database). */
  databaseUrl: string
  /** Wake only for rows of these queues (default: every queue). */
  queues?: readonly string[]
}

const RECONNECT_MIN_MS = 500
const RECONNECT_MAX_MS = 10_000

/**
 * Calls `onRows` whenever a transaction that wrote outbox rows commits, in any process (outbox writes notify
 * OUTBOX_CHANNEL). One connection of its own, outside the pool: LISTEN holds it. While PostgreSQL is away it
 * reconnects with backoff and calls `onRows` once reconnected, since rows written meanwhile sent no notification
 * anyone heard. A hint only: the relay's polling still finds every row without it.
 */
export function listenForOutbox(opts: OutboxListenOptions & { onRows: () => void; onError?: (err: unknown) => void }): {
  close(): Promise<void>
} {
  const wanted = opts.queues ? new Set(opts.queues) : null
  let client: pg.Client | null = null
  let closed = false
  let failures = 0
  let timer: NodeJS.Timeout | null = null

  const reconnectLater = () => {
    if (closed || timer) return
    const delay = Math.min(RECONNECT_MIN_MS * 2 ** failures, RECONNECT_MAX_MS)
    failures++
    timer = setTimeout(() => {
      timer = null
      void connect()
    }, delay)
  }
  const connect = async () => {
    const c = new pg.Client({ connectionString: parseDatabaseUrl(opts.databaseUrl).connectionString })
    client = c
    // A broken connection emits 'error' and/or 'end'; either way a new one is made.
    c.on('error', (err) => {
      opts.onError?.(err)
      c.end().catch(() => {})
      if (client === c) reconnectLater()
    })
    c.on('end', () => {
      if (client === c) reconnectLater()
    })
    c.on('notification', (n) => {
      if (n.channel === OUTBOX_CHANNEL && (!wanted || wanted.has(n.payload ?? ''))) opts.onRows()
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`)
      if (closed) {
        await c.end()
        return
      }
      failures = 0
      opts.onRows()
    } catch (err) {
      opts.onError?.(err)
      c.end().catch(() => {})
      if (client === c) reconnectLater()
    }
  }
  void connect()
  return {
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      const c = client
      client = null
      await c?.end().catch(() => {})
    },
  }
}
