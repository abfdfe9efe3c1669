import { Queue } from 'bullmq'
import { ALL_QUEUE_NAMES } from './catalog.ts'
import type { RedisConnection } from './connection.ts'

export type QueueSet = {
  get(name: string): Queue
  all(): Queue[]
  close(): Promise<void>
}

const DEFAULT_JOB_OPTIONS = {
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: { age: 7 * 24 * 3600 },
}

export function createQueueSet(opts: {
  connection: RedisConnection
  prefix: string
  stageAttempts?: number
}): QueueSet {
  const queues = new Map<string, Queue>()
  for (const name of ALL_QUEUE_NAMES) {
    // Stage jobs are retried by BullMQ; deliveries schedule their own retries from PostgreSQL.
    const retries = name.startsWith('stage-') ? { attempts: opts.stageAttempts ?? 3, backoff: { type: 'custom' } } : {}
    queues.set(
      name,
      new Queue(name, {
        connection: opts.connection,
        prefix: opts.prefix,
        defaultJobOptions: { ...DEFAULT_JOB_OPTIONS, ...retries },
      }),
    )
  }
  return {
    get(name) {
      const q = queues.get(name)
      if (!q) throw new Error(`unknown queue ${name}`)
      return q
    },
    all: () => [...queues.values()],
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()))
    },
  }
}
