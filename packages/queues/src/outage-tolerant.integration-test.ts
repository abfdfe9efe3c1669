import { randomBytes } from 'node:crypto'
import { Queue, QueueEvents, Worker } from 'bullmq'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedis } from './connection.ts'
import { outageTolerant } from './outage-tolerant.ts'

// Real BullMQ on real Redis: a job that meets a database outage waits it out without spending its attempts.
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `ot${randomBytes(4).toString('hex')}`
const queue = new Queue('outage', { connection: createRedis(url, 'producer'), prefix })
const events = new QueueEvents('outage', { connection: createRedis(url, 'worker'), prefix })
afterAll(async () => {
  await queue.obliterate({ force: true })
  await queue.close()
  await events.close()
})

const unreachable = () =>
  Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), {
    name: 'PrismaClientInitializationError',
  })

describe('outageTolerant', () => {
  it('delays a job through an outage without spending an attempt, then runs it', async () => {
    let calls = 0
    const outages: string[] = []
    const worker = new Worker(
      'outage',
      outageTolerant(
        async () => {
          calls++
          if (calls <= 2) throw unreachable()
          return 'done'
        },
        { delayMs: 50, onOutage: (i) => outages.push(i.dependency) },
      ),
      { connection: createRedis(url, 'worker'), prefix },
    )
    try {
      await events.waitUntilReady()
      const job = await queue.add('x', {}, { attempts: 1 })
      expect(await job.waitUntilFinished(events, 15_000)).toBe('done')
      const finished = await queue.getJob(job.id!)
      expect(finished?.attemptsMade).toBe(1)
      expect(calls).toBe(3)
      expect(outages).toEqual(['postgresql', 'postgresql'])
    } finally {
      await worker.close()
    }
  })

  it('any other error is the job’s own and spends its attempt as before', async () => {
    const worker = new Worker(
      'outage',
      outageTolerant(async () => {
        throw new Error('the document is unreadable')
      }),
      { connection: createRedis(url, 'worker'), prefix },
    )
    try {
      await events.waitUntilReady()
      const job = await queue.add('y', {}, { attempts: 1 })
      await expect(job.waitUntilFinished(events, 15_000)).rejects.toThrow('the document is unreadable')
    } finally {
      await worker.close()
    }
  })
})
