// Jobs API, Form B, black box: each test names the spec rule it checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf, scannedPdf, textPdf, textPng } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, publishPipeline } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
}, 120_000)
afterAll(async () => stack?.stop())

const FINAL = ['completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled']
const post = (
  key: string,
  files: { name: string; bytes: Uint8Array }[],
  fields: Record<string, string> = {},
  query = '',
) => call(stack.baseUrl, 'POST', `/v1/jobs${query}`, { key, form: fileForm('files', files, fields) })
const get = (key: string, id: string, include = '') =>
  call(stack.baseUrl, 'GET', `/v1/jobs/${id}${include ? `?include=${include}` : ''}`, { key })
const waitFinal = (key: string, id: string, include = 'stages,result') =>
  pollUntil(
    () => get(key, id, include),
    (r) => FINAL.includes(r.body.status),
    120_000,
  )

async function publishedPipeline(key: string, definition: object = {}, name = 'p') {
  return publishPipeline(stack.baseUrl, key, name, definition)
}

describe('Form B submit', () => {
  it('each repeated `files` part becomes its own job, answered in upload order', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [
      { name: 'first.pdf', bytes: await invoicePdf() },
      { name: 'second.pdf', bytes: await textPdf([['second']]) },
      { name: 'third.pdf', bytes: await textPdf([['third']]) },
    ])
    expect(r.status).toBe(202)
    expect(r.body).toHaveLength(3)
    const names = await Promise.all(
      r.body.map(async (e: { job_id: string }) => (await get(key, e.job_id)).body.input.file_name),
    )
    expect(names).toEqual(['first.pdf', 'second.pdf', 'third.pdf'])
    expect(new Set(r.body.map((e: { job_id: string }) => e.job_id)).size).toBe(3)
  })

  it('text parameters are also accepted in the query string', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(
      key,
      [{ name: 'q.pdf', bytes: await invoicePdf() }],
      {},
      '?priority=high&environment=test&client_reference_id=q-1',
    )
    expect(r.status).toBe(202)
    const job = await get(key, r.body[0].job_id)
    expect(job.body).toMatchObject({ priority: 'high', environment: 'test', client_reference_id: 'q-1' })
  })

  it('pipeline_version may name a draft; an unknown version is 404 VERSION_NOT_FOUND', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const id = await publishedPipeline(key)
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${id}/versions`, {
      key,
      json: { definition: { credits: { per_page: 3 } } },
    })
    const draft = await post(key, [{ name: 'd.pdf', bytes: await invoicePdf() }], {
      pipeline_id: id,
      pipeline_version: '2',
    })
    expect(draft.status).toBe(202)
    expect((await get(key, draft.body[0].job_id)).body.pipeline_version).toBe(2)
    const missing = await post(key, [{ name: 'd.pdf', bytes: await invoicePdf() }], {
      pipeline_id: id,
      pipeline_version: '7',
    })
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('VERSION_NOT_FOUND')
  })

  it('a pipeline with no published version and no pipeline_version → 400 PIPELINE_NOT_PUBLISHED', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', { key, json: { name: 'draft-only' } })
    const r = await post(key, [{ name: 'd.pdf', bytes: await invoicePdf() }], { pipeline_id: p.body.id })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('PIPELINE_NOT_PUBLISHED')
  })

  it('pipeline selection: request > bound key > workspace default > platform parse', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B')
    const bound = await publishedPipeline(key, {}, 'bound')
    const requested = await publishedPipeline(key, {}, 'requested')
    const dflt = await publishedPipeline(key, {}, 'default')
    const boundKey = await call(stack.baseUrl, 'POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      admin: true,
      json: { scopes: ['jobs:write', 'jobs:read'], pipeline_id: bound },
    })
    const pipelineOf = async (k: string, fields: Record<string, string>) => {
      const r = await post(k, [{ name: 's.pdf', bytes: await invoicePdf() }], fields)
      expect(r.status).toBe(202)
      return (await get(k, r.body[0].job_id)).body.pipeline_id
    }
    expect(await pipelineOf(key, {})).toBe('parse')
    await call(stack.baseUrl, 'PATCH', `/admin/v1/workspaces/${workspaceId}`, {
      admin: true,
      json: { default_pipeline_id: dflt },
    })
    expect(await pipelineOf(key, {})).toBe(dflt)
    expect(await pipelineOf(boundKey.body.key, {})).toBe(bound)
    expect(await pipelineOf(boundKey.body.key, { pipeline_id: requested })).toBe(requested)
  })

  it('a submission meets the key as it is now: a newer published version, then a revocation, each on the very next submission', async () => {
    // The API may serve a submission under the key's principal read on an earlier one; the submission's own statement
    // confirms it (ARCHITECTURE.md, "A submission's key"), so each change still shows on the next request.
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 100 })
    const issued = await call(stack.baseUrl, 'POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      admin: true,
      json: { scopes: ['jobs:write'] },
    })
    const submitKey = issued.body.key as string
    const pipelineId = await publishedPipeline(key, { credits: { per_page: 1 } }, 'versions')
    await call(stack.baseUrl, 'PATCH', `/admin/v1/workspaces/${workspaceId}`, {
      admin: true,
      json: { default_pipeline_id: pipelineId },
    })
    const pdf = await invoicePdf()
    const submitOne = () => post(submitKey, [{ name: 'v.pdf', bytes: pdf }])
    /** The pipeline and version the job of a 202 runs (read with the workspace's other key). */
    const ranBy = async (r: { body: { job_id: string }[] }) => {
      const job = (await get(key, r.body[0]!.job_id)).body
      return { pipeline_id: job.pipeline_id, pipeline_version: job.pipeline_version }
    }
    const first = await submitOne()
    expect(first.status).toBe(202)
    expect(await ranBy(first)).toEqual({ pipeline_id: pipelineId, pipeline_version: 1 })
    const v2 = await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions`, {
      key,
      json: { definition: { credits: { per_page: 3 } } },
    })
    expect(v2.status).toBe(201)
    const publish = await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/2/publish`, { key })
    expect(publish.status).toBe(200)
    const second = await submitOne()
    expect(second.status).toBe(202)
    expect(await ranBy(second)).toEqual({ pipeline_id: pipelineId, pipeline_version: 2 })
    // Jobs may settle meanwhile (reserved to spent); what a submission takes is `available`.
    const available = async () => (await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body.available
    expect(await available()).toBe(100 - 1 - 3) // one page at version 1's price, one at version 2's
    const revokePath = `/admin/v1/workspaces/${workspaceId}/api-keys/${issued.body.id}/revoke`
    expect((await call(stack.baseUrl, 'POST', revokePath, { admin: true })).status).toBe(200)
    const refused = await submitOne()
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe('unauthorized')
    // Nothing was written for the refused submission: the same two jobs, the same balance.
    expect((await call(stack.baseUrl, 'GET', '/v1/jobs', { key })).body.data).toHaveLength(2)
    expect(await available()).toBe(96)
  })

  it('schema_id selects the extraction schema; an unknown one is 400', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [{ name: 'i.pdf', bytes: await invoicePdf() }], { schema_id: 'invoice' })
    const done = await waitFinal(key, r.body[0].job_id)
    expect(done.body.result.documents[0]).toMatchObject({ schema_id: 'invoice' })
    expect(done.body.result.documents[0].data.amount.value).toBe(1200)
    const bad = await post(key, [{ name: 'i.pdf', bytes: await invoicePdf() }], { schema_id: 'nope' })
    expect(bad.status).toBe(400)
  })

  it('environment filters the job lists', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    await post(key, [{ name: 'p.pdf', bytes: await invoicePdf() }])
    await post(key, [{ name: 't.pdf', bytes: await invoicePdf() }], { environment: 'test' })
    const test = await call(stack.baseUrl, 'GET', '/v1/jobs?environment=test', { key })
    expect(test.body.data.map((j: { environment: string }) => j.environment)).toEqual(['test'])
    const prod = await call(stack.baseUrl, 'GET', '/v1/jobs?environment=production', { key })
    expect(prod.body.data).toHaveLength(1)
  })

  it('mode other than sync is async (202 queued)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [{ name: 'm.pdf', bytes: await invoicePdf() }], { mode: 'SYNC-ish' })
    expect(r.status).toBe(202)
    expect(r.body[0]).toMatchObject({ status: 'queued', execution_mode: 'async' })
  })

  it('sync, finished inside the window: 200 with full job objects (include=stages,result shape)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(
      key,
      [
        { name: 's1.pdf', bytes: await invoicePdf() },
        { name: 's2.pdf', bytes: await textPdf([['two']]) },
      ],
      { mode: 'sync' },
    )
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(2)
    for (const job of r.body) {
      expect(job).toMatchObject({
        status: 'completed',
        execution_mode: 'sync',
        stages: expect.any(Array),
        result: { documents: expect.any(Array) },
      })
    }
    expect(r.body[0].result.documents[0].data.invoice_number.value).toBe('INV-2026-0042')
    // GET's include as a list parameter repeated reads the same as the comma-separated one.
    const repeated = await get(key, r.body[0].job_id, 'stages&include=result')
    expect(repeated.body).toMatchObject({ stages: expect.any(Array), result: { documents: expect.any(Array) } })
  })
})

describe('Form B errors (spec error table)', () => {
  it('422 UNSUPPORTED_FILE_TYPE for a type the pipeline does not accept', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const id = await publishedPipeline(key, { accept: { types: ['pdf'] } })
    const r = await post(key, [{ name: 'x.png', bytes: await textPng(['hello']) }], { pipeline_id: id })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('UNSUPPORTED_FILE_TYPE')
  })

  it("422 FILE_TOO_LARGE for a file over the pipeline's own max_file_mb", async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const id = await publishedPipeline(key, { accept: { max_file_mb: 0.001 } })
    const r = await post(key, [{ name: 'big.pdf', bytes: await invoicePdf() }], { pipeline_id: id })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('FILE_TOO_LARGE')
  })

  it('400 MISSING_FILE for an empty files part', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [{ name: 'empty.pdf', bytes: new Uint8Array() }])
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('MISSING_FILE')
  })

  it('spec Form B responses rule 4: a later rejected file leaves the jobs of earlier files standing; the response is the error, naming them', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [
      { name: 'good.pdf', bytes: await invoicePdf() },
      { name: 'bad.pdf', bytes: new TextEncoder().encode('not a document') },
    ])
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('UNSUPPORTED_FILE_TYPE')
    const list = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
    expect(list.body.data.map((j: { input: { file_name: string } }) => j.input.file_name)).toEqual(['good.pdf'])
    expect(r.body.details.created_job_ids).toEqual([list.body.data[0].job_id])
  })

  it('an error of the first file names no jobs (none were created)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await post(key, [{ name: 'bad.pdf', bytes: new TextEncoder().encode('not a document') }])
    expect(r.status).toBe(422)
    expect(r.body.details?.created_job_ids).toBeUndefined()
  })
})

describe('GET /v1/jobs (DESIGN: keyset pagination)', () => {
  it('pages newest first with no duplicates or gaps while jobs are being added', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const pdf = await textPdf([['x']])
    const original: string[] = []
    for (let i = 0; i < 7; i++) original.push((await post(key, [{ name: `${i}.pdf`, bytes: pdf }])).body[0].job_id)
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; page < 10; page++) {
      const r = await call(stack.baseUrl, 'GET', `/v1/jobs?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key })
      expect(r.status).toBe(200)
      seen.push(...r.body.data.map((j: { job_id: string }) => j.job_id))
      // New jobs arrive between pages; they are newer than the cursor and must not shift the pages.
      await post(key, [{ name: 'late.pdf', bytes: pdf }])
      if (!r.body.page.has_more) break
      cursor = r.body.page.next_cursor
    }
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual([...original].reverse())
  })

  it('limit outside 1..100 → 400 INVALID_PARAMETER', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    for (const limit of ['0', '101', 'abc']) {
      const r = await call(stack.baseUrl, 'GET', `/v1/jobs?limit=${limit}`, { key })
      expect(r.status).toBe(400)
      expect(r.body.error).toBe('INVALID_PARAMETER')
    }
  })
})

describe('POST /v1/jobs/{id}/cancel (DESIGN)', () => {
  it('cancels a running job: 200 with the job, credits released, no further stages; a final job → 409', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 10 })
    const pages = [1, 2, 3].map((n) => [`Scanned page ${n}`, 'Total: 10.00 EUR'])
    const r = await post(key, [{ name: 'scan.pdf', bytes: await scannedPdf(pages) }])
    const id = r.body[0].job_id
    await pollUntil(
      () => get(key, id, 'stages'),
      (x) => x.body.stages?.some((s: { stage: string }) => s.stage === 'parse'),
      60_000,
      50,
    )
    const cancel = await call(stack.baseUrl, 'POST', `/v1/jobs/${id}/cancel`, { key })
    expect(cancel.status).toBe(200)
    expect(cancel.body).toMatchObject({ job_id: id, status: 'cancelled' })
    const credits = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 10, reserved: 0, spent: 0 })
    // The worker finishes OCR, then sees the cancellation at the stage boundary and stops.
    await new Promise((res) => setTimeout(res, 8000))
    const after = await get(key, id, 'stages')
    expect(after.body.status).toBe('cancelled')
    expect(after.body.stages.map((s: { stage: string }) => s.stage)).not.toContain('extract')
    // Its document ends with it: not `processing` forever.
    const doc = await call(stack.baseUrl, 'GET', `/v1/documents/${id.replace(/^job_/, 'doc_')}_0`, { key })
    expect(doc.status).toBe(200)
    expect(doc.body.status).toBe('cancelled')
    const again = await call(stack.baseUrl, 'POST', `/v1/jobs/${id}/cancel`, { key })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('JOB_NOT_CANCELLABLE')
  })
})

describe('priority (spec: standard or high)', () => {
  it('a high-priority job overtakes standard jobs waiting in a busy queue', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 100 })
    await stack.kill('stage-worker')
    const pdf = await textPdf([['queued work']])
    const standard: string[] = []
    for (let i = 0; i < 6; i++) standard.push((await post(key, [{ name: `s${i}.pdf`, bytes: pdf }])).body[0].job_id)
    const high = (await post(key, [{ name: 'urgent.pdf', bytes: pdf }], { priority: 'high' })).body[0].job_id
    await stack.start('stage-worker', { QUIRE_STAGE_CONCURRENCY: '1' })
    const finished = await Promise.all([...standard, high].map((id) => waitFinal(key, id, '')))
    const doneAt = (i: number) => Date.parse(finished[i]!.body.completed_at)
    const highAt = doneAt(standard.length)
    const overtaken = standard.filter((_, i) => doneAt(i) > highAt).length
    // Submitted last, it must finish ahead of (nearly) every standard job that was waiting before it.
    expect(overtaken).toBeGreaterThanOrEqual(standard.length - 1)
  })
})
