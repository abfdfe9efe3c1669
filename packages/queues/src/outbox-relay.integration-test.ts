import { randomBytes } from 'node:crypto'
import { createPrisma, type Db } from '@quire/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageQueueName } from './catalog.ts'
import { createRedis } from './connection.ts'
import { relayOutboxOnce } from './outbox-relay.ts'
import { writeOutbox } from './outbox-writer.ts'
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
    const key = `job_${randomBytes(6).toString('hex')}.parse`
    const message = { queue: stageQueueName('parse'), name: 'parse', jobKey: key, payload: { jobId: 'x' } }
    await expect(
      db.$transaction(async (tx) => {
        await writeOutbox(tx, message)
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await db.$transaction((tx) => writeOutbox(tx, message))
    await db.$transaction((tx) => writeOutbox(tx, message)) // a duplicate write, as after a crash and retry
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    const q = queues.get(stageQueueName('parse'))
    const jobs = await q.getJobs(['waiting', 'prioritized', 'delayed'])
    expect(jobs.filter((j) => j.id === key)).toHaveLength(1)
    const pending = await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })
    expect(pending).toBe(0)
  })

  it('keeps rows when Redis refuses them, so an outage delays work but loses none', async () => {
    const key = `job_${randomBytes(6).toString('hex')}.extract`
    await db.$transaction((tx) =>
      writeOutbox(tx, { queue: stageQueueName('extract'), name: 'extract', jobKey: key, payload: { jobId: 'y' } }),
    )
    const dead = createRedis('redis://127.0.0.1:1', 'producer')
    const offline = createQueueSet({ connection: dead, prefix })
    await expect(relayOutboxOnce(db, offline)).rejects.toBeTruthy()
    await offline.close().catch(() => {})
    dead.disconnect()
    expect(await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })).toBe(1)
    while ((await relayOutboxOnce(db, queues)) > 0) {}
    expect(await db.outboxMessage.count({ where: { jobKey: key, dispatchedAt: null } })).toBe(0)
  })
})
