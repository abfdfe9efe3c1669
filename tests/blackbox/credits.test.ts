// Credits, black box: real parallel HTTP submissions race for the last credits and for the spending cap; the ledger
// is read back over the API; a stage worker is SIGKILLed in the middle of settling a job's hold and the job still
// settles exactly once, with `npm run reconcile` reporting zero drift.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, type Res } from './client.ts'
import { startStack, type Stack } from './stack.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const FINAL = ['completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled']

let stack: Stack
let pdf: Uint8Array

beforeAll(async () => {
  pdf = await invoicePdf()
  stack = await startStack()
}, 120_000)
afterAll(async () => {
  await stack?.stop()
})

/** A published pipeline charging `perPage` credits per page (the invoice PDF has one page). */
async function pricedPipeline(key: string, perPage: number): Promise<string> {
  const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
    key,
    json: {
      name: `priced-${perPage}-${Math.random().toString(36).slice(2)}`,
      definition: { credits: { per_page: perPage } },
    },
  })
  expect(p.status).toBe(201)
  expect((await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })).status).toBe(200)
  return p.body.id as string
}

const submitB = (key: string, pipelineId: string) =>
  call(stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('files', [{ name: 'invoice.pdf', bytes: pdf }], { pipeline_id: pipelineId }),
  })

const submitA = (key: string, pipelineId: string) =>
  call(stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('file', [{ name: 'invoice.pdf', bytes: pdf }], { pipeline_id: pipelineId }),
  })

function expectRefused(r: Res) {
  expect(r.status).toBe(402)
  expect(r.body).toMatchObject({
    error: 'PAYMENT_REQUIRED',
    message: expect.any(String),
    timestamp: expect.any(String),
  })
}

async function jobCount(key: string) {
  const r = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
  expect(r.status).toBe(200)
  return r.body.data.length as number
}

async function ledger(key: string, query = ''): Promise<{ kind: string; amount: number; job_id: string | null }[]> {
  const out = []
  let cursor: string | null = null
  do {
    const r: Res = await call(
      stack.baseUrl,
      'GET',
      `/v1/credits/ledger?limit=3${query}${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    )
    expect(r.status).toBe(200)
    out.push(...r.body.data)
    cursor = r.body.page.has_more ? r.body.page.next_cursor : null
  } while (cursor)
  return out
}

function reconcile(): Promise<{ code: number; report: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'scripts', 'reconcile.ts'), '--json'],
      {
        cwd: ROOT,
        env: stack.env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('exit', (code) => resolve({ code: code ?? 1, report: JSON.parse(out) }))
  })
}

describe('credits under parallel submissions', () => {
  it('N submissions racing for the last credits: floor(balance / cost) jobs, 402 and no job for the rest', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 10 })
    const pipelineId = await pricedPipeline(key, 3)
    const results = await Promise.all(Array.from({ length: 30 }, () => submitB(key, pipelineId)))
    const accepted = results.filter((r) => r.status === 202)
    expect(accepted).toHaveLength(3)
    for (const r of results.filter((x) => x.status !== 202)) expectRefused(r)
    expect(await jobCount(key)).toBe(3)

    const balance = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(balance.body).toMatchObject({ available: 1, spending_cap: null })
    expect(balance.body.available + balance.body.reserved + balance.body.spent).toBe(10)
    const reserves = await ledger(key, '&kind=reserve')
    expect(reserves.map((e) => e.amount)).toEqual([3, 3, 3])
    expect(new Set(reserves.map((e) => e.job_id))).toEqual(new Set(accepted.map((r) => r.body[0].job_id)))
  })

  it('Form B spending cap: spent + reserved this month never exceeds it under parallel submissions', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 100, spendingCap: 7 })
    const pipelineId = await pricedPipeline(key, 3)
    const results = await Promise.all(Array.from({ length: 10 }, () => submitB(key, pipelineId)))
    expect(results.filter((r) => r.status === 202)).toHaveLength(2)
    for (const r of results.filter((x) => x.status !== 202)) expectRefused(r)
    expect(await jobCount(key)).toBe(2)
    const balance = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(balance.body).toMatchObject({ available: 94, spending_cap: 7 })
    expect(balance.body.reserved + balance.body.spent).toBe(6)
  })

  it('a spending cap set on a Form A workspace is honoured too', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const patched = await call(stack.baseUrl, 'PATCH', `/admin/v1/workspaces/${workspaceId}`, {
      admin: true,
      json: { spending_cap: 4 },
    })
    expect(patched.status).toBe(200)
    const pipelineId = await pricedPipeline(key, 3)
    const results = await Promise.all(Array.from({ length: 6 }, () => submitA(key, pipelineId)))
    expect(results.filter((r) => r.status === 202)).toHaveLength(1)
    for (const r of results.filter((x) => x.status !== 202)) expectRefused(r)
    expect(await jobCount(key)).toBe(1)
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({
      available: 97,
      spending_cap: 4,
    })
  })

  it('GET /v1/credits/ledger pages entries newest first and validates limit', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 5 })
    const grant = await call(stack.baseUrl, 'POST', `/admin/v1/workspaces/${workspaceId}/credits`, {
      admin: true,
      json: { amount: 7 },
    })
    expect(grant.status).toBe(200)
    const entries = await ledger(key)
    expect(entries.map((e) => [e.kind, e.amount, e.job_id])).toEqual([
      ['grant', 7, null],
      ['grant', 5, null],
    ])
    expect(entries[0]).toMatchObject({
      debit_account: 'issuance',
      credit_account: 'available',
      created_at: expect.any(String),
    })
    for (const limit of ['0', '101', 'x']) {
      const bad = await call(stack.baseUrl, 'GET', `/v1/credits/ledger?limit=${limit}`, { key })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toBe('INVALID_PARAMETER')
    }
    const noScope = await newWorkspace(stack.baseUrl, 'B', { scopes: ['jobs:read'] })
    expect((await call(stack.baseUrl, 'GET', '/v1/credits/ledger', { key: noScope.key })).status).toBe(403)
  })

  // DESIGN (Robustness): bad input is the client's error, 500 only for Quire's own faults. A balance, cap, grant or
  // price past what the ledger's columns hold is refused up front, never a database overflow.
  it('amounts past what a balance holds are 400, not a database error', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 110 })
    const tooBig = 2_147_483_648
    for (const [path, json] of [
      [`/admin/v1/workspaces/${workspaceId}/credits`, { amount: tooBig }],
      [`/admin/v1/workspaces/${workspaceId}/credits`, { amount: 2_147_483_647 }], // 110 + this overflows
      ['/admin/v1/workspaces', { name: 'big', api_form: 'B', credits: tooBig }],
      ['/admin/v1/workspaces', { name: 'big', api_form: 'B', spending_cap: Number.MAX_SAFE_INTEGER }],
    ] as const) {
      const r = await call(stack.baseUrl, 'POST', path, { admin: true, json })
      expect(r.status, JSON.stringify(json)).toBe(400)
      expect(r.body.error).toBe('INVALID_PARAMETER')
    }
    const cap = await call(stack.baseUrl, 'PATCH', `/admin/v1/workspaces/${workspaceId}`, {
      admin: true,
      json: { spending_cap: 1_099_511_627_776 },
    })
    expect(cap.status).toBe(400)
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({ available: 110 })
    const price = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'dear', definition: { credits: { per_page: 3_000_000_000 } } },
    })
    expect(price.status).toBe(400)
    expect(price.body.error).toBe('INVALID_DEFINITION')
  })
})

describe('a stage worker killed in the middle of settling', () => {
  it('leaves nothing half-done: the restarted worker settles the job exactly once and reconcile shows zero drift', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 20 })
    const pipelineId = await pricedPipeline(key, 2)
    // `client` holds the lock; `observer` watches from outside its transaction (statistics views are snapshotted
    // once per transaction, so the lock holder itself would keep seeing stale query texts).
    const client = new pg.Client({ connectionString: stack.env.DATABASE_URL })
    const observer = new pg.Client({ connectionString: stack.env.DATABASE_URL })
    await Promise.all([client.connect(), observer.connect()])
    try {
      // Hold the job's workspace row locked against updates, so that the destination stage's settlement blocks inside
      // its transaction, after its hold has left the job row for credit_holds (nothing else of a job's run updates the
      // workspace). The stage worker is stopped until the lock is held: a one-page job can otherwise settle before.
      await stack.kill('stage-worker', 'SIGTERM')
      const submit = await submitB(key, pipelineId)
      expect(submit.status).toBe(202)
      const jobId = submit.body[0].job_id as string
      await client.query('BEGIN')
      const locked = await client.query(
        `SELECT w.id FROM workspaces w JOIN jobs j ON j.workspace_id = w.id WHERE j.id = $1 FOR NO KEY UPDATE OF w`,
        [jobId],
      )
      expect(locked.rows).toHaveLength(1)
      expect((await client.query(`SELECT status FROM ledger_holds WHERE job_id = $1`, [jobId])).rows).toEqual([
        { status: 'pending' },
      ])
      const { rows: me } = await client.query('SELECT pg_backend_pid() AS pid')
      await stack.start('stage-worker')

      // The worker reaches destination and waits on our lock, in the middle of settling: kill it there.
      const blocked = await pollUntil(
        () =>
          observer.query(`SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [me[0].pid]),
        (r) => r.rows.length > 0,
        90_000,
        50,
      )
      expect(blocked.rows[0].query).toMatch(/credit_holds/)
      // Chained stages commit together at the end of their run (QUIRE_STAGE_CHECKPOINT_MS), so from outside the job
      // is still running and no stage after its first shows as done: the settlement is part of that one commit.
      const job = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages`, { key })
      expect(FINAL).not.toContain(job.body.status)
      expect(job.body.stages.find((s: { stage: string }) => s.stage === 'destination')?.status).not.toBe('completed')
      await stack.kill('stage-worker', 'SIGKILL')
      await client.query('COMMIT')

      // The dead worker's transaction rolls back once PostgreSQL notices: the hold is still pending, nothing posted.
      await pollUntil(
        () => observer.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [blocked.rows[0].pid]),
        (r) => r.rows.length === 0,
        30_000,
        100,
      )
      expect((await client.query(`SELECT status FROM ledger_holds WHERE job_id = $1`, [jobId])).rows).toEqual([
        { status: 'pending' },
      ])
      expect((await ledger(key, `&job_id=${jobId}`)).map((e) => e.kind)).toEqual(['reserve'])
      const midway = await reconcile()
      expect(midway).toMatchObject({ code: 0, report: { driftCredits: 0, holdAnomalies: [] } })

      await stack.start('stage-worker')
      const done = await pollUntil(
        () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
        (r) => FINAL.includes(r.body.status),
        120_000,
      )
      expect(done.body.status).toBe('completed')

      const entries = await ledger(key, `&job_id=${jobId}`)
      expect(entries.filter((e) => e.kind === 'settle')).toEqual([
        expect.objectContaining({ amount: 2, job_id: jobId }),
      ])
      expect(entries.map((e) => e.kind).sort()).toEqual(['reserve', 'settle'])
      expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({
        available: 18,
        reserved: 0,
        spent: 2,
      })
      const after = await reconcile()
      expect(after).toMatchObject({ code: 0, report: { driftCredits: 0, holdAnomalies: [], maxSettlesPerJob: 1 } })
    } finally {
      await client.query('ROLLBACK').catch(() => {})
      await Promise.all([client.end(), observer.end()])
    }
  }, 240_000)
})
