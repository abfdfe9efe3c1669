import { Cluster, Redis, type RedisOptions } from 'ioredis'

/** A single Redis or a Redis Cluster; BullMQ and Quire's own calls work with either. */
export type RedisConnection = Redis | Cluster

const CLUSTER_SCHEMES = ['redis+cluster:', 'rediss+cluster:']

/**
 * Workers need `maxRetriesPerRequest: null` (BullMQ blocks on Redis); producers fail fast instead of queueing
 * commands while Redis is away — the outbox keeps the work, so nothing is lost.
 *
 * `url` is `redis://[user:password@]host:port[/db]` for one server, or
 * `redis+cluster://[user:password@]host:port,host:port,...` (`rediss+cluster://` for TLS) for a Redis Cluster: the
 * listed nodes are only where discovery starts, the client learns the rest of the cluster from them.
 */
export function createRedis(url: string, role: 'worker' | 'producer'): RedisConnection {
  const opts: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (n) => Math.min(n * 200, 2000) }
  const cluster = parseClusterUrl(url)
  const redis = cluster
    ? new Cluster(cluster.nodes, {
        redisOptions: { ...opts, ...cluster.auth, ...(cluster.tls ? { tls: {} } : {}) },
        // A producer must not hold commands while the cluster is unreachable (see above); a worker waits.
        enableOfflineQueue: role === 'worker',
        clusterRetryStrategy: (n) => Math.min(n * 200, 2000),
      })
    : new Redis(url, opts)
  redis.on('error', () => {
    // Reconnects are automatic; errors surface on the commands that fail.
  })
  return redis
}

/**
 * Whether `redis` has lost its server, read without a round trip: true from the moment its connection closes (or a
 * first connection fails) until it is ready again. The API answers 503 on it while Redis is away (DESIGN: while a
 * dependency is down, endpoints answer 503 SERVICE_UNAVAILABLE). Call it right after creating the connection, so
 * its first `ready` is seen.
 */
export function watchRedisDown(redis: RedisConnection): () => boolean {
  let down = false
  redis.on('ready', () => {
    down = false
  })
  for (const lost of ['close', 'end'] as const) {
    redis.on(lost, () => {
      down = true
    })
  }
  return () => down
}

export type ClusterUrl = {
  nodes: { host: string; port: number }[]
  auth: { username?: string; password?: string }
  tls: boolean
}

/** The nodes of a `redis+cluster://` URL, or null when `url` names a single server. */
export function parseClusterUrl(url: string): ClusterUrl | null {
  const scheme = CLUSTER_SCHEMES.find((s) => url.startsWith(`${s}//`))
  if (!scheme) return null
  const rest = url.slice(scheme.length + 2).replace(/\/.*$/, '')
  const at = rest.lastIndexOf('@')
  const credentials = at >= 0 ? rest.slice(0, at) : ''
  const hosts = at >= 0 ? rest.slice(at + 1) : rest
  const nodes = hosts
    .split(',')
    .filter(Boolean)
    .map((hostPort) => {
      const colon = hostPort.lastIndexOf(':')
      const host = colon > 0 ? hostPort.slice(0, colon) : hostPort
      const port = colon > 0 ? Number(hostPort.slice(colon + 1)) : 6379
      if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
        throw new Error(`REDIS_URL: "${hostPort}" is not a host:port`)
      }
      return { host: host.replace(/^\[|\]$/g, ''), port }
    })
  if (nodes.length === 0) throw new Error('REDIS_URL: a redis+cluster:// URL names at least one node')
  const [user, password] = credentials ? credentials.split(':', 2) : []
  return {
    nodes,
    auth: {
      ...(user ? { username: decodeURIComponent(user) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
    },
    tls: scheme === 'rediss+cluster:',
  }
}
