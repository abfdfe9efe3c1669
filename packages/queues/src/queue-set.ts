import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { ALL_QUEUE_NAMES } from './catalog.ts'

export type QueueSet = {
  get(name: string): Queue
  all(): Queue[]
  close(): Promise<void>
}

const DEFAULT_JOB_OPTIONS = {
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: { age: 7 * 24 * 3600 },
}

export function createQueueSet(opts: { connection: Redis; prefix: string }): QueueSet {
  const queues = new Map<string, Queue>()
  for (const name of ALL_QUEUE_NAMES) {
    queues.set(
      name,
      new Queue(name, { connection: opts.connection, prefix: opts.prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS }),
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
