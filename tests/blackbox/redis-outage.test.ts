// DESIGN "Robustness and operations": while a dependency is down /healthz stays 200, /readyz answers 503 naming it,
// other endpoints answer 503 SERVICE_UNAVAILABLE with Retry-After; when it returns, work resumes by itself, nothing
// lost or done twice. DESIGN "Architecture": a Redis outage delays work, it never loses a job or an event. Black box:
// every app reaches Redis through a TCP proxy that the test cuts (connections reset, new ones refused) while jobs
// are in flight; no app is restarted. The requeue sweep stays at its default (5 min), so recovery within a minute
// cannot come from it.
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { completedDeliveries } from './completed-deliveries.ts'
import { useStackWithReceiver } from './stack.ts'
import { useTcpProxy } from './tcp-proxy.ts'

const JOBS = 4
const OUTAGE_MS = 10_000
const proxied = useTcpProxy(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 6379)
const ctx = useStackWithReceiver({ redisUrlForApps: proxied.through })

describe('Redis outage', () => {
  it('answers 503 while Redis is away, then the jobs submitted before it complete once by themselves and new ones are accepted', async () => {
    const { stack, receiver } = ctx
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'redis-outage', url: receiver.url, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    const pdf = await invoicePdf()
    const submit = (name: string) =>
      call(stack.baseUrl, 'POST', '/v1/jobs', { key, form: fileForm('files', [{ name, bytes: pdf }]) })
    const jobIds: string[] = []
    for (let i = 0; i < JOBS; i++) {
      const res = await submit(`before-${i}.pdf`)
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      jobIds.push(res.body[0].job_id as string)
    }

    await proxied.proxy.cut()
    const cutAt = Date.now()
    // The API notices its connection closing: every endpoint that needs the dependencies answers 503.
    const during = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobIds[0]}`, { key }),
      (r) => r.status === 503,
      5_000,
    )
    expect(during.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) })
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(JSON.stringify(during.body)).not.toMatch(/ioredis|ECONNREFUSED|ECONNRESET|127\.0\.0\.1|\/work\/|at .*\.ts/i)
    const refused = await submit('during.pdf')
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' })
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200)
    const ready = await fetch(`${stack.baseUrl}/readyz`)
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as { details: { checks: Record<string, string> } }).details.checks).toMatchObject({
      redis: 'unreachable',
      postgresql: 'ok',
    })
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - cutAt))))
    await proxied.proxy.restore()

    // Back by itself: the API answers again and takes new work.
    const after = await pollUntil(
      () => submit('after.pdf'),
      (r) => r.status === 202,
      30_000,
    )
    jobIds.push(after.body[0].job_id as string)
    for (const id of jobIds) {
      const done = await pollUntil(
        () => call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key }),
        (r) => r.status === 200 && r.body.status === 'completed',
        60_000,
      )
      expect(done.body.status, id).toBe('completed')
    }

    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL })
    await db.connect()
    try {
      // Nothing done twice: one settlement per job, no stage run twice; the refused submission left no job.
      const settled = await db.query(
        "SELECT count(*)::int AS n FROM ledger_entries WHERE job_id = ANY($1) AND kind = 'settle'",
        [jobIds],
      )
      expect(settled.rows[0].n).toBe(jobIds.length)
      const runs = await db.query(
        'SELECT job_id, stage FROM stage_runs WHERE job_id = ANY($1) GROUP BY job_id, stage HAVING count(*) > 1',
        [jobIds],
      )
      expect(runs.rows).toEqual([])
      // A file in its own row or, for a lone submission, in the job row.
      const files = await db.query(
        `SELECT ((SELECT count(*) FROM job_files WHERE file_name = 'during.pdf')
              + (SELECT count(*) FROM jobs WHERE file_name = 'during.pdf'))::int AS n`,
      )
      expect(files.rows[0].n).toBe(0)
    } finally {
      await db.end()
    }

    // Each job's job.completed reaches the receiver under one delivery id.
    const deliveries = await completedDeliveries(receiver, jobIds, 60_000)
    for (const id of jobIds) expect(deliveries.get(id)?.size, id).toBe(1)
  }, 300_000)
})
