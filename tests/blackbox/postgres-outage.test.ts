// DESIGN "Robustness and operations": while PostgreSQL is away /healthz stays 200, /readyz answers 503 naming it,
// other endpoints answer 503 SERVICE_UNAVAILABLE with Retry-After and no internals; when it returns, work resumes by
// itself, nothing lost or done twice. Black box: the apps reach PostgreSQL through a TCP proxy that the test cuts
// (every connection reset, new ones refused) for 25 s while jobs are in flight; no app is restarted.
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { completedDeliveries } from './completed-deliveries.ts'
import { useStackWithReceiver } from './stack.ts'
import { useTcpProxy } from './tcp-proxy.ts'

const JOBS = 8
const OUTAGE_MS = 25_000
const direct = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres')
const proxied = useTcpProxy(direct.toString(), 5432)
// The requeue sweep stays at its default (5 min), so recovery within a minute cannot come from it.
const ctx = useStackWithReceiver({ databaseUrlForApps: proxied.through })

/** The stack's database, reached directly (not through the proxy). */
function directUrl(): string {
  const u = new URL(ctx.stack.env.DATABASE_URL!)
  u.hostname = direct.hostname
  u.port = direct.port
  return u.toString()
}

describe('PostgreSQL outage', () => {
  it('answers 503 while it is away, then every job completes once by itself, credits settled once, webhooks sent once', async () => {
    const { stack, receiver } = ctx
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'outage', url: receiver.url, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    const pdf = await invoicePdf()
    const jobIds: string[] = []
    for (let i = 0; i < JOBS; i++) {
      const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm('files', [{ name: `outage-${i}.pdf`, bytes: pdf }]),
      })
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      jobIds.push(res.body[0].job_id as string)
    }

    await proxied.proxy.cut()
    const cutAt = Date.now()
    // Liveness stays up; readiness names what is down; the API answers 503 with Retry-After and no internals.
    const health = await fetch(`${stack.baseUrl}/healthz`)
    expect(health.status).toBe(200)
    const ready = await fetch(`${stack.baseUrl}/readyz`)
    expect(ready.status).toBe(503)
    expect(JSON.stringify(await ready.json())).toMatch(/postgres/i)
    const during = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobIds[0]}`, { key })
    expect(during.status).toBe(503)
    expect(during.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' })
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(JSON.stringify(during.body)).not.toMatch(/prisma|ECONNREFUSED|127\.0\.0\.1|\/work\/|at .*\.ts/i)
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - cutAt))))
    await proxied.proxy.restore()
    const restoredAt = Date.now()

    // Every job completes on its own within 60 s of the database's return.
    for (const id of jobIds) {
      const done = await pollUntil(
        () => call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key }),
        (r) => r.status === 200 && r.body.status === 'completed',
        Math.max(1000, 60_000 - (Date.now() - restoredAt)),
      )
      expect(done.body.status, id).toBe('completed')
    }

    const db = new pg.Client({ connectionString: directUrl() })
    await db.connect()
    try {
      // Nothing done twice: one document per job, one completed stage run per stage, one settlement per job.
      const docs = await db.query(
        'SELECT job_id, count(*)::int AS n FROM documents WHERE job_id = ANY($1) GROUP BY job_id',
        [jobIds],
      )
      expect(docs.rows.map((r) => r.n)).toEqual(jobIds.map(() => 1))
      const runs = await db.query(
        'SELECT job_id, stage, count(*)::int AS n FROM stage_runs WHERE job_id = ANY($1) GROUP BY job_id, stage HAVING count(*) > 1',
        [jobIds],
      )
      expect(runs.rows).toEqual([])
      const settled = await db.query(
        "SELECT count(*)::int AS n FROM ledger_entries WHERE job_id = ANY($1) AND kind = 'settle'",
        [jobIds],
      )
      expect(settled.rows[0].n).toBe(JOBS)
      // The outbox drained.
      const pending = await pollUntil(
        async () => (await db.query('SELECT count(*)::int AS n FROM outbox WHERE dispatched_at IS NULL')).rows[0].n,
        (n) => n === 0,
        30_000,
      )
      expect(pending).toBe(0)
    } finally {
      await db.end()
    }

    // Each job's job.completed reaches the receiver under one delivery id.
    const deliveries = await completedDeliveries(receiver, jobIds, 60_000, whyNotDelivered)
    for (const id of jobIds) expect(deliveries.get(id)?.size, id).toBe(1)
  }, 300_000)
})

/**
 * For a failure report: where the job.completed of each job not delivered stands (its job.finished event, fan-out
 * row, deliveries and attempts), and the dispatcher's last distinct log messages.
 */
async function whyNotDelivered(missing: string[]): Promise<string> {
  const db = new pg.Client({ connectionString: directUrl() })
  await db.connect()
  try {
    const events = await db.query(
      `SELECT e.id, e.job_id, e.created_at, e.fanned_out_at,
              (SELECT json_agg(json_build_object('id', o.id, 'dispatched_at', o.dispatched_at, 'dispatch_after',
                               o.dispatch_after, 'replace_finished', o.replace_finished))
               FROM outbox o WHERE o.job_key LIKE '%' || e.id || '%') AS outbox,
              (SELECT json_agg(json_build_object('id', d.id, 'status', d.status, 'attempts', d.attempts,
                               'next_attempt_at', d.next_attempt_at,
                               'log', (SELECT json_agg(json_build_object('attempt', a.attempt, 'status_code', a.status_code))
                                       FROM delivery_attempts a WHERE a.delivery_id = d.id)))
               FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e WHERE e.job_id = ANY($1) AND e.type = 'job.finished'`,
      [missing],
    )
    const log = ctx.stack.logs['webhook-dispatcher']
      .join('')
      .split('\n')
      .map((line) => {
        try {
          const l = JSON.parse(line) as { time: number; msg: string; jobId?: string; err?: { message?: string } }
          return `${new Date(l.time).toISOString()} ${l.msg} ${l.jobId ?? ''} ${l.err?.message ?? ''}`
        } catch {
          return line
        }
      })
      .filter((line, i, all) => line.trim() && line.slice(25) !== all[i - 1]?.slice(25))
      .slice(-30)
      .join('\n')
    return `not delivered: ${JSON.stringify(events.rows, null, 1)}\ndispatcher log (last lines):\n${log}`
  } catch (err) {
    return `(could not read why: ${(err as Error).message})`
  } finally {
    await db.end()
  }
}
