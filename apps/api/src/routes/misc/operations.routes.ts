import { DomainError } from '@quire/domain'
import { ledgerMetrics } from '@quire/ledger'
import type { AppDeps } from '../../http/context.ts'
import { defineRoute } from '../route.ts'

const CHECK_TIMEOUT_MS = 2000

const withTimeout = <T>(p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS))])

/** Each dependency as `ok` or a short word of what is wrong (no internals: this answer needs no credentials). */
async function readiness(deps: AppDeps): Promise<Record<'postgresql' | 'redis' | 'migrations', string>> {
  const database = withTimeout(
    deps.db.$queryRaw<{ applied: bigint; unfinished: bigint }[]>`
      SELECT count(*) AS applied,
             count(*) FILTER (WHERE finished_at IS NULL AND rolled_back_at IS NULL) AS unfinished
      FROM _prisma_migrations`,
  ).then(
    ([row]) => ({
      postgresql: 'ok',
      migrations: !row || row.applied === 0n ? 'not applied' : row.unfinished > 0n ? 'unfinished' : 'ok',
    }),
    // The table missing means the database answers but was never migrated.
    (err: unknown) =>
      /_prisma_migrations/.test(String(err))
        ? { postgresql: 'ok', migrations: 'not applied' }
        : { postgresql: 'unreachable', migrations: 'unknown' },
  )
  const redis = withTimeout(deps.pingRedis()).then(
    () => 'ok',
    () => 'unreachable',
  )
  const [db, r] = await Promise.all([database, redis])
  return { ...db, redis: r }
}

const metricsFor = new WeakMap<object, ReturnType<typeof ledgerMetrics>>()

export const OPERATIONS_ROUTES = [
  defineRoute({
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tag: 'Operations',
    summary: 'Liveness',
    description: 'Answers 200 while the process runs, whatever its dependencies do (see `/readyz`).',
    auth: 'none',
    usesDependencies: false,
    responses: { '200': { description: 'Alive.', json: { type: 'object', properties: { ok: { const: true } } } } },
    handle: async () => ({ status: 200, body: { ok: true } }),
  }),
  defineRoute({
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    tag: 'Operations',
    summary: 'Readiness',
    description:
      'Checks PostgreSQL, Redis and the database migrations; 503 SERVICE_UNAVAILABLE names what is down in `details.checks`.',
    auth: 'none',
    reportsOutages: true,
    responses: {
      '200': {
        description: 'Ready: every check is `ok`.',
        json: { type: 'object', properties: { ok: { const: true }, checks: { type: 'object' } } },
      },
    },
    handle: async ({ deps }) => {
      const checks = await readiness(deps)
      const down = Object.entries(checks).filter(([, v]) => v !== 'ok')
      if (down.length) {
        const what = down.map(([k, v]) => `${k} ${v}`).join(', ')
        throw new DomainError('SERVICE_UNAVAILABLE', `not ready: ${what}`, { checks })
      }
      return { status: 200, body: { ok: true, checks } }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    description: 'Ledger drift, hold anomalies and settles per job in the Prometheus text format. Admin token.',
    auth: 'admin',
    responses: { '200': { description: 'Prometheus text exposition.', text: 'text/plain' } },
    handle: async ({ deps }) => {
      // One registry per database client: prom-client refuses a metric name registered twice.
      let ledger = metricsFor.get(deps.db)
      if (!ledger) metricsFor.set(deps.db, (ledger = ledgerMetrics(deps.db)))
      return { status: 200, type: ledger.contentType, body: await ledger.metrics() }
    },
  }),
]
