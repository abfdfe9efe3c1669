// Time-driven job rules, black box, on stacks with shortened clocks (every limit is configuration).
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { invoicePdf, scannedPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { startStack, type Stack } from './stack.ts'

const stacks: Stack[] = []
afterAll(async () => Promise.all(stacks.map((s) => s.stop())))
const stackWith = async (env: Record<string, string>) => {
  const s = await startStack({ env })
  stacks.push(s)
  return s
}
const slowPdf = () =>
  scannedPdf([1, 2, 3].map((n) => [`Scanned page ${n}`, 'Invoice Number: SLOW-1', 'Total: 10.00 EUR']))

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true })
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
  } catch {
    return []
  }
}

describe('sync window exceeded (spec: Form B sync, case 3)', () => {
  it('202 with degradation_reason sync_budget_exceeded on every unfinished job, which keep running', async () => {
    const s = await stackWith({ QUIRE_SYNC_WINDOW_MS: '1500' })
    const { key } = await newWorkspace(s.baseUrl, 'B', { credits: 50 })
    const r = await call(s.baseUrl, 'POST', '/v1/jobs?mode=sync', {
      key,
      form: fileForm('files', [
        { name: 'slow-1.pdf', bytes: await slowPdf() },
        { name: 'slow-2.pdf', bytes: await slowPdf() },
      ]),
    })
    expect(r.status).toBe(202)
    expect(r.body).toHaveLength(2)
    for (const entry of r.body) {
      expect(entry.degradation_reason).toBe('sync_budget_exceeded')
      expect(['processing', 'queued']).toContain(entry.status)
      if (entry.status === 'processing') expect(entry.execution_mode).toBe('sync')
      expect(entry.status_url).toContain(entry.job_id)
    }
    for (const entry of r.body) {
      const done = await pollUntil(
        () => call(s.baseUrl, 'GET', `/v1/jobs/${entry.job_id}`, { key }),
        (x) => x.body.status === 'completed',
        120_000,
      )
      expect(done.body.degradation_reason).toBe('sync_budget_exceeded')
    }
  }, 240_000)
})

describe('timed_out (DESIGN/issue: a sync job past its own hard limit)', () => {
  it('ends as timed_out with its whole hold released, as for a failure', async () => {
    const s = await stackWith({
      QUIRE_SYNC_WINDOW_MS: '10000',
      QUIRE_SYNC_JOB_TIMEOUT_MS: '12000',
      QUIRE_SWEEP_INTERVAL_MS: '250',
    })
    // This worker runs only the first stage (and the sweepers): the job starts, then cannot finish, however fast
    // the machine is, so only the hard limit can end it.
    await s.kill('stage-worker')
    await s.start('stage-worker', { QUIRE_STAGES: 'initialization', QUIRE_LOG_LEVEL: 'info' })
    // Submit only once the worker consumes its queue: a cold start on a loaded machine can outlast the sync window.
    await pollUntil(
      async () => s.logs['stage-worker'].join(''),
      (out) => out.includes('stage worker started'),
      150_000,
      200,
    )
    const { key } = await newWorkspace(s.baseUrl, 'B', { credits: 20 })
    const r = await call(s.baseUrl, 'POST', '/v1/jobs?mode=sync', {
      key,
      form: fileForm('files', [{ name: 'stuck.pdf', bytes: await invoicePdf() }]),
    })
    expect(r.status).toBe(202)
    expect(r.body[0]).toMatchObject({
      status: 'processing',
      execution_mode: 'sync',
      degradation_reason: 'sync_budget_exceeded',
    })
    const id = r.body[0].job_id
    const done = await pollUntil(
      () => call(s.baseUrl, 'GET', `/v1/jobs/${id}`, { key }),
      (x) => x.body.status === 'timed_out',
      60_000,
    )
    expect(done.body.error).toMatchObject({ code: 'sync_timeout', stage: expect.any(String) })
    const credits = await call(s.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 20, reserved: 0, spent: 0 })
  }, 300_000)
})

describe('retention (spec: 24 h, then job_expired)', () => {
  it('deletes result, documents and stored files; reads answer 410 job_expired in the nested envelope', async () => {
    const s = await stackWith({ QUIRE_JOB_RETENTION_MS: '15000', QUIRE_SWEEP_INTERVAL_MS: '250' })
    for (const form of ['A', 'B'] as const) {
      const { key } = await newWorkspace(s.baseUrl, form)
      let jobId: string
      if (form === 'A') {
        const p = await call(s.baseUrl, 'POST', '/v1/pipelines', { key, json: { name: 'p' } })
        await call(s.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
        const r = await call(s.baseUrl, 'POST', '/v1/jobs', {
          key,
          form: fileForm('file', [{ name: 'a.pdf', bytes: await invoicePdf() }], { pipeline_id: p.body.id }),
        })
        jobId = r.body.id
      } else {
        const r = await call(s.baseUrl, 'POST', '/v1/jobs', {
          key,
          form: fileForm('files', [{ name: 'b.pdf', bytes: await invoicePdf() }]),
        })
        jobId = r.body[0].job_id
      }
      const done = await pollUntil(
        () => call(s.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
        (x) => x.body.status === 'completed',
        60_000,
      )
      const docId =
        form === 'A'
          ? done.body.documents[0].id
          : (await call(s.baseUrl, 'GET', `/v1/jobs/${jobId}?include=result`, { key })).body.result.documents[0].id
      expect((await filesUnder(s.env.QUIRE_BLOB_DIR!)).some((f) => f.includes(jobId))).toBe(true)
      const expired = await pollUntil(
        () => call(s.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
        (x) => x.status === 410,
        30_000,
      )
      expect(expired.body.error).toMatchObject({ code: 'job_expired', message: expect.any(String) })
      // A list offers only what can be read: the expired job is no longer listed.
      const listed = await call(s.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((j: { id?: string; job_id?: string }) => j.id ?? j.job_id)).not.toContain(jobId)
      // Spec (Limits): "result and documents are deleted and reads return job_expired", a document's read too.
      const doc = await call(s.baseUrl, 'GET', `/v1/documents/${docId}`, { key })
      expect(doc.status).toBe(410)
      expect(doc.body.error).toMatchObject({ code: 'job_expired', message: expect.any(String) })
      const review = await call(s.baseUrl, 'POST', `/v1/documents/${docId}/review`, {
        key,
        json: { action: 'approve' },
      })
      expect(review.status).toBe(410)
      // A document id of no job of the workspace is still not found.
      const never = await call(s.baseUrl, 'GET', '/v1/documents/doc_000000000000000000000000_0', { key })
      expect(never.status).toBe(404)
      expect((await filesUnder(s.env.QUIRE_BLOB_DIR!)).some((f) => f.includes(jobId))).toBe(false)
      // An id that never existed is still job_not_found, not expired.
      const unknown = await call(s.baseUrl, 'GET', '/v1/jobs/job_000000000000000000000000', { key })
      expect(unknown.status).toBe(404)
    }
  }, 240_000)
})

describe('stored files no live job owns (a submission killed between storing its upload and committing)', () => {
  it('are deleted once older than QUIRE_BLOB_SWEEP_MIN_AGE_MS; files of live jobs and files Quire did not make stay', async () => {
    const s = await stackWith({ QUIRE_BLOB_SWEEP_INTERVAL_MS: '500', QUIRE_BLOB_SWEEP_MIN_AGE_MS: '8000' })
    const blobDir = s.env.QUIRE_BLOB_DIR!
    const { key } = await newWorkspace(s.baseUrl, 'B')
    const r = await call(s.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'live.pdf', bytes: await invoicePdf() }]),
    })
    const liveJob: string = r.body[0].job_id
    await pollUntil(
      () => call(s.baseUrl, 'GET', `/v1/jobs/${liveJob}`, { key }),
      (x) => x.body.status === 'completed',
      60_000,
    )
    // Files as a killed submission leaves them: keys of jobs that never committed, one stored an hour ago, one now.
    const plant = async (relative: string, ageMs: number) => {
      const p = path.join(blobDir, relative)
      await mkdir(path.dirname(p), { recursive: true })
      await writeFile(p, '%PDF-1.4 never committed')
      const t = new Date(Date.now() - ageMs)
      await utimes(p, t, t)
      return p
    }
    const orphanKey = () => {
      const id = `job_${randomBytes(12).toString('hex')}`
      return `ws_gone/${id.slice(-2)}/${id}-0`
    }
    const old = await plant(orphanKey(), 3_600_000)
    const recent = await plant(orphanKey(), 0)
    const foreign = await plant('imports/readme.txt', 3_600_000)
    const live = (await filesUnder(blobDir)).find((f) => f.includes(liveJob))!
    expect(live).toBeDefined()

    await pollUntil(
      () => filesUnder(blobDir),
      (files) => !files.includes(old),
      30_000,
    )
    expect(await filesUnder(blobDir)).toEqual(expect.arrayContaining([recent, foreign, live]))
    // Past the minimum age the recent one goes too; the live job's file (older than that by now) stays.
    await pollUntil(
      () => filesUnder(blobDir),
      (files) => !files.includes(recent),
      30_000,
    )
    expect((await filesUnder(blobDir)).sort()).toEqual([foreign, live].sort())
    const job = await call(s.baseUrl, 'GET', `/v1/jobs/${liveJob}?include=result`, { key })
    expect(job.body.status).toBe('completed')
  }, 120_000)

  it('QUIRE_BLOB_SWEEP_INTERVAL_MS=0 turns the sweep off (a store shared with another deployment)', async () => {
    const s = await stackWith({
      QUIRE_BLOB_SWEEP_INTERVAL_MS: '0',
      QUIRE_BLOB_SWEEP_MIN_AGE_MS: '1000',
      QUIRE_SWEEP_INTERVAL_MS: '250',
    })
    const id = `job_${randomBytes(12).toString('hex')}`
    const file = path.join(s.env.QUIRE_BLOB_DIR!, 'ws_other', id.slice(-2), `${id}-0`)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, '%PDF-1.4 another deployment')
    const hourAgo = new Date(Date.now() - 3_600_000)
    await utimes(file, hourAgo, hourAgo)
    // The worker's other sweeps run every 250 ms meanwhile; with the blob sweep on, this file goes within a second.
    await new Promise((r) => setTimeout(r, 4_000))
    expect(await filesUnder(s.env.QUIRE_BLOB_DIR!)).toContain(file)
  }, 120_000)
})
