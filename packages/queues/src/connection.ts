import { Redis, type RedisOptions } from 'ioredis'

/**
 * Workers need `maxRetriesPerRequest: null` (BullMQ blocks on Redis); producers fail fast instead of queueing
 * commands while Redis is away — the outbox keeps the work, so nothing is lost.
 */
export function createRedis(url: string, role: 'worker' | 'producer'): Redis {
  const opts: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (n) => Math.min(n * 200, 2000) }
  const redis = new Redis(url, opts)
  redis.on('error', () => {
    // Reconnects are automatic; errors surface on the commands that fail.
  })
  return redis
}
