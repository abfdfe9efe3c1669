/**
 * Which dependency an error says is down, or null when it is not an outage. Used to answer 503
 * SERVICE_UNAVAILABLE (with Retry-After) instead of an internal error while PostgreSQL or Redis is away: the client
 * should retry, and nothing about the request was wrong.
 */
export type Dependency = 'postgresql' | 'redis'

// Prisma: P1001 can't reach, P1002 timed out, P1008 operation timed out, P1017 server closed the connection,
// P2024 pool timeout. Driver adapter kinds seen when the server is gone or restarting.
const PRISMA_OUTAGE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])
const ADAPTER_OUTAGE_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
])
// PostgreSQL SQLSTATEs of a server shutting down or not accepting connections (class 08 and 57P0x).
const PG_OUTAGE_STATES = /^(08\d\d\d|57P0[1-4])$/
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'])
const REDIS_MESSAGES = [
  "Stream isn't writeable",
  'Connection is closed',
  'Reached the max retries per request limit',
  'connect ECONNREFUSED',
]

type ErrorLike = {
  name?: unknown
  code?: unknown
  message?: unknown
  meta?: { driverAdapterError?: { cause?: { kind?: unknown } } }
  cause?: unknown
}

export function dependencyDown(err: unknown, depth = 0): Dependency | null {
  if (!err || typeof err !== 'object' || depth > 4) return null
  const e = err as ErrorLike
  const code = typeof e.code === 'string' ? e.code : ''
  const message = typeof e.message === 'string' ? e.message : ''
  const name = typeof e.name === 'string' ? e.name : ''
  if (name.startsWith('PrismaClient')) {
    if (name === 'PrismaClientInitializationError' || PRISMA_OUTAGE_CODES.has(code)) return 'postgresql'
    const kind = e.meta?.driverAdapterError?.cause?.kind
    if (typeof kind === 'string' && ADAPTER_OUTAGE_KINDS.has(kind)) return 'postgresql'
    if (/Can't reach database server|Connection terminated|server closed the connection/i.test(message)) {
      return 'postgresql'
    }
  }
  if (PG_OUTAGE_STATES.test(code)) return 'postgresql'
  if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((m) => message.includes(m))) {
    // ioredis; a bare ECONNREFUSED names its port, which tells PostgreSQL and Redis apart.
    return /:5432\b/.test(message) ? 'postgresql' : 'redis'
  }
  // Only a failed outgoing connection ("connect ECONNREFUSED host:port"); a client hanging up is ECONNRESET too.
  if (NET_CODES.has(code) && /^connect /.test(message)) return /:5432\b/.test(message) ? 'postgresql' : 'redis'
  return dependencyDown(e.cause, depth + 1)
}
