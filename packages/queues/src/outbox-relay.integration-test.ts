import { randomBytes } from 'node:crypto'
import { createPrisma, type Db } from '@quire/db'
import { Worker } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DELIVERY_QUEUE, QUEUE_CATALOG, stageQueueName } from './catalog.ts'
import { createRedis } from './connection.ts'
import { dispatchOutboxRows, type OutboxRow, pruneOutbox, relayOutboxOnce, startOutboxRelay } from './outbox-relay.ts'
import { outbox } from './outbox-writer.ts'
import { createQueueSet, type QueueSet } from './queue-set.ts'

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

describe('transactional outbox', () => {
  it('a rolled-back transaction enqueues nothing; a committed one is relayed once under its deterministic id', async () => {
    const jobId = `job_${randomBytes(6).toString('hex')}`
    const key = `${jobId}.parse`
    const message = { stage: 'parse', jobId } as const
    await expect(
      db.$transaction(async (tx) => {
        await outbox.stage(tx, message)
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await db.$transaction((tx) => outbox.stage(tx, message))
    await db.$transaction((tx) => outbox.stage(tx, message)) // a duplicate write, as after a crash and retry
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    const q = queues.get(stageQueueName('parse'))
    const jobs = await q.getJobs(['waiting', 'prioritized', 'delayed'])
    expect(jobs.filter((j) => j.id === key)).toHaveLength(1)
    const pending = await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })
    expect(pending).toBe(0)
  })

  it('keeps rows when Redis refuses them, so an outage delays work but loses none', async () => {
    const jobId = `job_${randomBytes(6).toString('hex')}`
    const key = `${jobId}.extract`
    await db.$transaction((tx) => outbox.stage(tx, { stage: 'extract', jobId }))
    const dead = createRedis('redis://127.0.0.1:1', 'producer')
    const offline = createQueueSet({ connection: dead, prefix })
    await expect(relayOutboxOnce(db, offline)).rejects.toBeTruthy()
    await offline.close().catch(() => {})
    dead.disconnect()
    expect(await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })).toBe(1)
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect(await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })).toBe(0)
  })

  it('a requeue replaces a job BullMQ failed without PostgreSQL knowing; a plain write leaves it failed', async () => {
    const jobId = `job_${randomBytes(6).toString('hex')}`
    const key = `${jobId}.validate`
    const q = queues.get(stageQueueName('validate'))
    // The stage failed in BullMQ (as during a database outage): the job sits in `failed` under its deterministic id.
    await db.$transaction((tx) => outbox.stage(tx, { stage: 'validate', jobId }))
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    const worker = new Worker(
      q.name,
      async () => {
        throw new Error('database unreachable')
      },
      {
        connection: createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'worker'),
        prefix,
        settings: { backoffStrategy: () => 1 },
      },
    )
    try {
      const deadline = Date.now() + 10_000
      while ((await q.getJobState(key)) !== 'failed' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50))
    } finally {
      await worker.close()
    }
    expect(await q.getJobState(key)).toBe('failed')

    await db.$transaction((tx) => outbox.stage(tx, { stage: 'validate', jobId }))
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect(await q.getJobState(key)).toBe('failed')

    await db.$transaction((tx) => outbox.stage(tx, { stage: 'validate', jobId }, { replaceFinished: true }))
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect(['waiting', 'prioritized']).toContain(await q.getJobState(key))

    // Work BullMQ still holds is left alone: a second requeue does not add a copy.
    await db.$transaction((tx) => outbox.stage(tx, { stage: 'validate', jobId }, { replaceFinished: true }))
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    const held = await q.getJobs(['waiting', 'prioritized', 'delayed', 'active'])
    expect(held.filter((j) => j.id === key)).toHaveLength(1)
  })

  it('a producer sends its committed rows itself: queued under their ids, marked dispatched, a repeat is a no-op', async () => {
    const deliveryIds = [`dlv_${randomBytes(6).toString('hex')}`, `dlv_${randomBytes(6).toString('hex')}`]
    const key = QUEUE_CATALOG.delivery.address({ deliveryIds, attempt: 1 }).jobKey
    await db.$transaction((tx) => outbox.delivery(tx, { deliveryIds, attempt: 1 }))
    const rows = await db.$queryRaw<OutboxRow[]>`
      SELECT id, queue, name, job_key, payload, priority, delay_ms, replace_finished FROM outbox WHERE job_key = ${key}`
    expect(rows).toHaveLength(1)
    await dispatchOutboxRows(db, queues, rows)
    await dispatchOutboxRows(db, queues, rows) // as after a crash before the mark, or the relay racing it
    const q = queues.get(DELIVERY_QUEUE)
    const jobs = (await q.getJobs(['waiting', 'prioritized', 'delayed'])).filter((j) => j.id === key)
    expect(jobs.map((j) => j.data)).toEqual([{ deliveryIds, attempt: 1 }])
    expect(await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })).toBe(0)
  })

  it('a listening relay sends rows another process commits at once, not at its next poll', async () => {
    const jobId = `job_${randomBytes(6).toString('hex')}`
    const key = `${jobId}.parse`
    // A poll interval far longer than the test: only the notification can wake the relay in time.
    const relay = startOutboxRelay({
      db,
      queues,
      intervalMs: 600_000,
      listen: { databaseUrl: process.env.DATABASE_URL!, queues: [stageQueueName('parse')] },
    })
    try {
      await new Promise((r) => setTimeout(r, 500)) // the LISTEN is in place and the first pass has run
      const other = createPrisma(process.env.DATABASE_URL!)
      await other.$transaction((tx) => outbox.stage(tx, { stage: 'parse', jobId }))
      await other.$disconnect()
      const q = queues.get(stageQueueName('parse'))
      const deadline = Date.now() + 5_000
      while (!(await q.getJob(key)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      expect((await q.getJob(key))?.data).toEqual({ jobId })
    } finally {
      await relay.stop()
    }
  })

  it('prunes rows dispatched longer ago than the retention, and never a pending row however old', async () => {
    const ids = await outboxRows(['old-dispatched', 'recent-dispatched', 'old-pending'])
    await age(ids['old-dispatched'], { createdMs: 3 * HOUR, dispatchedMs: 2 * HOUR })
    await age(ids['recent-dispatched'], { createdMs: 3 * HOUR, dispatchedMs: 10 * 60_000 })
    await age(ids['old-pending'], { createdMs: 30 * 24 * HOUR, dispatchedMs: null })
    expect(await pruneOutbox(db, HOUR)).toBeGreaterThanOrEqual(1)
    expect(await remaining(ids)).toEqual(['old-pending', 'recent-dispatched'])
  })

  it('deletes in batches until nothing old is left', async () => {
    const ids = await outboxRows(['a', 'b', 'c', 'd', 'e'])
    for (const id of Object.values(ids)) await age(id, { createdMs: 3 * HOUR, dispatchedMs: 2 * HOUR })
    await pruneOutbox(db, HOUR, { batchSize: 2 })
    expect(await remaining(ids)).toEqual([])
  })

  it('the running relay prunes on its interval (QUIRE_OUTBOX_RETENTION_MS), keeping recent rows', async () => {
    const ids = await outboxRows(['old-dispatched', 'recent-dispatched'])
    await age(ids['old-dispatched'], { createdMs: 3 * HOUR, dispatchedMs: 2 * HOUR })
    await age(ids['recent-dispatched'], { createdMs: 3 * HOUR, dispatchedMs: 60_000 })
    const relay = startOutboxRelay({ db, queues, intervalMs: 50, retentionMs: HOUR, pruneIntervalMs: 100 })
    try {
      const deadline = Date.now() + 10_000
      while ((await remaining(ids)).includes('old-dispatched') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
      }
    } finally {
      await relay.stop()
    }
    expect(await remaining(ids)).toEqual(['recent-dispatched'])
  })
})

const HOUR = 3_600_000

/** One fan-out row per label (one write each: a write's events share one row), returns label -> outbox row id. */
async function outboxRows(labels: string[]): Promise<Record<string, bigint>> {
  const run = randomBytes(6).toString('hex')
  const eventIds = labels.map((l) => `evt_${run}_${l}`)
  await db.$transaction(async (tx) => {
    for (const eventId of eventIds) await outbox.fanout(tx, { eventId })
  })
  const rows = await db.outboxMessage.findMany({ where: { jobKey: { in: eventIds.map((e) => `fanout.${e}`) } } })
  return Object.fromEntries(labels.map((l) => [l, rows.find((r) => r.jobKey === `fanout.evt_${run}_${l}`)!.id]))
}

/** Backdates a row: created `createdMs` ago, dispatched `dispatchedMs` ago (null: still pending). */
async function age(id: bigint | undefined, opts: { createdMs: number; dispatchedMs: number | null }) {
  const now = Date.now()
  const dispatchedAt = opts.dispatchedMs === null ? null : new Date(now - opts.dispatchedMs)
  await db.outboxMessage.update({
    where: { id: id! },
    data: { createdAt: new Date(now - opts.createdMs), dispatchedAt },
  })
}

async function remaining(ids: Record<string, bigint>): Promise<string[]> {
  const rows = await db.outboxMessage.findMany({ where: { id: { in: Object.values(ids) } }, select: { id: true } })
  return Object.entries(ids)
    .filter(([, id]) => rows.some((r) => r.id === id))
    .map(([label]) => label)
    .sort()
}
