import { randomBytes } from 'node:crypto'
import { createPrisma, type Db } from '@quire/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageQueueName } from './catalog.ts'
import { createRedis } from './connection.ts'
import { DIRECT_DISPATCH_GRACE_MS, startDirectDispatch } from './direct-dispatch.ts'
import { type OutboxRow, relayOutboxOnce } from './outbox-relay.ts'
import { outboxRowsOf } from './outbox-writer.ts'
import { createQueueSet, type QueueSet } from './queue-set.ts'

// Direct dispatch on real PostgreSQL and Redis: the producer's own send after its commit, with the outbox row as the
// safety net the relay takes over only once the row's grace has passed.

let db: Db
let queues: QueueSet
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer')
const prefix = `it${randomBytes(4).toString('hex')}`

beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!)
  queues = createQueueSet({ connection: redis, prefix })
})
afterAll(async () => {
  for (const q of queues.all()) await q.obliterate({ force: true })
  await queues.close()
  redis.disconnect()
  await db.$disconnect()
})

/** A committed stage row as submit_job writes it: due for the relay only after `graceMs`. */
async function committedRow(stage: 'initialization' | 'parse', graceMs = DIRECT_DISPATCH_GRACE_MS) {
  const jobId = `job_${randomBytes(6).toString('hex')}`
  const [values] = outboxRowsOf('stage', [{ stage, jobId }])
  const [row] = await db.$queryRaw<{ id: bigint }[]>`
    INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at, dispatch_after)
    VALUES (${values!.queue}, ${values!.name}, ${values!.job_key}, ${JSON.stringify(values!.payload)}::jsonb, NULL,
            NULL, false, now() AT TIME ZONE 'UTC', (now() AT TIME ZONE 'UTC') + make_interval(secs => ${graceMs} / 1000.0))
    RETURNING id`
  return { ...values!, id: row!.id } satisfies OutboxRow
}

const pending = (id: bigint) => db.outboxMessage.findUniqueOrThrow({ where: { id } })

describe('direct dispatch', () => {
  it('sends a committed row to BullMQ and marks it dispatched; the relay never sends it a second time', async () => {
    const row = await committedRow('initialization')
    let kicks = 0
    const direct = startDirectDispatch({ db, queues, kickRelay: () => kicks++ })
    direct.send([row])
    await direct.stop()
    const job = await queues.get(stageQueueName('initialization')).getJob(row.job_key)
    expect(job?.data).toEqual(row.payload)
    expect((await pending(row.id)).dispatchedAt).not.toBeNull()
    expect(kicks).toBe(0)
  })

  it('adds to BullMQ in the next turn of the event loop, so an answer written in this turn goes out first', async () => {
    const row = await committedRow('initialization')
    const queue = queues.get(stageQueueName('initialization'))
    const order: string[] = []
    const add = queue.add
    queue.add = function (this: typeof queue, ...args: Parameters<typeof add>) {
      order.push('add')
      return add.apply(this, args)
    }
    try {
      const direct = startDirectDispatch({ db, queues, kickRelay: () => {} })
      direct.send([row])
      // What answering does in the same turn: Node's HTTP response is flushed on a nextTick (the socket uncorked).
      process.nextTick(() => order.push('answer'))
      await direct.stop()
    } finally {
      queue.add = add
    }
    expect(order).toEqual(['answer', 'add'])
    expect((await queue.getJob(row.job_key))?.data).toEqual(row.payload)
    expect((await pending(row.id)).dispatchedAt).not.toBeNull()
  })

  it('the relay leaves a row in its grace alone and takes it over once the grace has passed (the producer died)', async () => {
    const row = await committedRow('parse', 60_000)
    // Other rows may be due (earlier tests); the relay drains those, never this one.
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect((await pending(row.id)).dispatchedAt).toBeNull()
    expect(await queues.get(stageQueueName('parse')).getJob(row.job_key)).toBeUndefined()
    await db.$executeRaw`UPDATE outbox SET dispatch_after = (now() AT TIME ZONE 'UTC') - interval '1 second' WHERE id = ${row.id}`
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect((await pending(row.id)).dispatchedAt).not.toBeNull()
    expect(await queues.get(stageQueueName('parse')).getJob(row.job_key)).toBeDefined()
  })

  it('when Redis refuses, hands the rows to the relay at once (grace cleared, relay kicked)', async () => {
    const row = await committedRow('initialization', 60_000)
    const dead = createRedis('redis://127.0.0.1:1', 'producer')
    const offline = createQueueSet({ connection: dead, prefix })
    let kicks = 0
    const errors: unknown[] = []
    const direct = startDirectDispatch({
      db,
      queues: offline,
      kickRelay: () => kicks++,
      onError: (e) => errors.push(e),
      redisTimeoutMs: 500,
    })
    direct.send([row])
    await direct.stop()
    await offline.close().catch(() => {})
    dead.disconnect()
    expect(errors.length).toBeGreaterThan(0)
    expect(kicks).toBe(1)
    expect(await pending(row.id)).toMatchObject({ dispatchedAt: null, dispatchAfter: null })
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect((await pending(row.id)).dispatchedAt).not.toBeNull()
    expect(await queues.get(stageQueueName('initialization')).getJob(row.job_key)).toBeDefined()
  })
})
