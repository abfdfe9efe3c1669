import { randomBytes } from 'node:crypto'
import { createPrisma, type Db } from '@quire/db'
import { Worker } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageQueueName } from './catalog.ts'
import { createRedis } from './connection.ts'
import { pruneOutbox, relayOutboxOnce, startOutboxRelay } from './outbox-relay.ts'
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

/** One fan-out row per label, written through the typed writer; returns label -> outbox row id. */
async function outboxRows(labels: string[]): Promise<Record<string, bigint>> {
  const run = randomBytes(6).toString('hex')
  const eventIds = labels.map((l) => `evt_${run}_${l}`)
  await db.$transaction((tx) =>
    outbox.fanout(
      tx,
      eventIds.map((eventId) => ({ eventId })),
    ),
  )
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
