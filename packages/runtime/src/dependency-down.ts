/**
 * Which dependency an error says is down, or null when it is not an outage. Used to answer 503
 * SERVICE_UNAVAILABLE (with Retry-After) instead of an internal error while PostgreSQL or Redis is away: the client
 * should retry, and nothing about the request was wrong.
 */
export type Dependency = 'postgresql' | 'redis'

/**
 * Where a client marks a socket error it knows came from its own connection (a bare `read ECONNRESET` could be any
 * peer's, an HTTP client hanging up or a webhook receiver, so its code alone says nothing). A global symbol, so the
 * marking package needs no dependency on this one.
 */
export const DEPENDENCY_MARK = Symbol.for('quire.dependency')

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
const PG_OUTAGE_MESSAGES = new RegExp(
  [
    "Can't reach database server",
    'Connection terminated',
    'server closed the connection',
    'terminating connection due to administrator command',
    'the database system is (shutting down|starting up|not yet accepting connections|in recovery mode)',
  ].join('|'),
  'i',
)
// node-postgres's own errors for a client whose connection broke (thrown outside Prisma, e.g. by the adapter while
// a transaction is open): the pooled connection died with the server.
const PG_CLIENT_MESSAGES =
  /Client has encountered a connection error and is not queryable|Client was closed and is not queryable/
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
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; code?: unknown } } }
  cause?: unknown
}

export function dependencyDown(err: unknown, depth = 0): Dependency | null {
  if (!err || typeof err !== 'object' || depth > 4) return null
  const marked = (err as { [DEPENDENCY_MARK]?: unknown })[DEPENDENCY_MARK]
  if (marked === 'postgresql' || marked === 'redis') return marked
  const e = err as ErrorLike
  const code = typeof e.code === 'string' ? e.code : ''
  const message = typeof e.message === 'string' ? e.message : ''
  const name = typeof e.name === 'string' ? e.name : ''
  if (name.startsWith('PrismaClient')) {
    if (name === 'PrismaClientInitializationError' || PRISMA_OUTAGE_CODES.has(code)) return 'postgresql'
    const cause = e.meta?.driverAdapterError?.cause
    if (typeof cause?.kind === 'string' && ADAPTER_OUTAGE_KINDS.has(cause.kind)) return 'postgresql'
    // A server error passed through by the adapter: its SQLSTATE says a shutdown or restart (57P01 on pg_ctl stop).
    const state = cause?.originalCode ?? cause?.code
    if (typeof state === 'string' && PG_OUTAGE_STATES.test(state)) return 'postgresql'
    if (PG_OUTAGE_MESSAGES.test(message)) {
      return 'postgresql'
    }
  }
  if (PG_OUTAGE_STATES.test(code)) return 'postgresql'
  // node-postgres directly (the few statements sent without Prisma: directQuery): its own messages.
  if (PG_CLIENT_MESSAGES.test(message) || PG_OUTAGE_MESSAGES.test(message)) return 'postgresql'
  // A driver adapter error's cause ({kind, originalCode}) reached by the recursion below.
  const kind = (err as { kind?: unknown }).kind
  if (typeof kind === 'string' && ADAPTER_OUTAGE_KINDS.has(kind)) return 'postgresql'
  const originalCode = (err as { originalCode?: unknown }).originalCode
  if (typeof originalCode === 'string' && PG_OUTAGE_STATES.test(originalCode)) return 'postgresql'
  if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((m) => message.includes(m))) {
    // ioredis; a bare ECONNREFUSED names its port, which tells PostgreSQL and Redis apart.
    return /:5432\b/.test(message) ? 'postgresql' : 'redis'
  }
  // Only a failed outgoing connection ("connect ECONNREFUSED host:port"); a client hanging up is ECONNRESET too.
  if (NET_CODES.has(code) && /^connect /.test(message)) return /:5432\b/.test(message) ? 'postgresql' : 'redis'
  return dependencyDown(e.cause, depth + 1)
}
