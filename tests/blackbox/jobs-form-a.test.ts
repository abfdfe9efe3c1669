// Jobs API, Form A, black box: each test names the spec rule it checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf, textPdf, textPng } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
let key: string
let pipelineId: string

beforeAll(async () => {
  stack = await startStack()
  ;({ key } = await newWorkspace(stack.baseUrl, 'A', { credits: 500 }))
  const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', { key, json: { name: 'a-pipe', definition: {} } })
  pipelineId = p.body.id
  await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/1/publish`, { key })
}, 120_000)
afterAll(async () => stack?.stop())

/** A 1×1 GIF (GIF89a): a type Form B takes and Form A does not. */
const ONE_PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///ywAAAAAAQABAAACAUwAOw==', 'base64')

const submit = (fields: Record<string, string>, files: { name: string; bytes: Uint8Array }[], field = 'file') =>
  call(stack.baseUrl, 'POST', '/v1/jobs', { key, form: fileForm(field, files, fields) })
const waitDone = (id: string) =>
  pollUntil(
    () => call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key }),
    (r) => r.body.status !== 'processing',
    90_000,
  )

describe('Form A submit', () => {
  it('pipeline_id is required (400, no job)', async () => {
    const r = await submit({}, [{ name: 'a.pdf', bytes: await invoicePdf() }])
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('INVALID_PARAMETER')
  })

  // spec, Errors: "400 MISSING_FILE: a files part was empty"; Form A's part is `file`. Declared for Form A too (the
  // stack enforces the contract: an undeclared code would be a 500 here).
  it('an empty `file` part → 400 MISSING_FILE (flat envelope), no job', async () => {
    const r = await submit({ pipeline_id: pipelineId }, [{ name: 'empty.pdf', bytes: new Uint8Array() }])
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'MISSING_FILE', message: expect.any(String) })
  })

  it('version "vN" pins a version; default is the latest published; pipeline.version echoes it', async () => {
    const v2 = await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions`, {
      key,
      json: { definition: { credits: { per_page: 2 } } },
    })
    expect(v2.status).toBe(201)
    // v2 is a draft: the default is still v1, and pinning the draft is refused in Form A.
    const dflt = await submit({ pipeline_id: pipelineId }, [{ name: 'a.pdf', bytes: await invoicePdf() }])
    expect(dflt.body.pipeline).toEqual({ id: pipelineId, version: 'v1' })
    const draft = await submit({ pipeline_id: pipelineId, version: 'v2' }, [
      { name: 'a.pdf', bytes: await invoicePdf() },
    ])
    expect(draft.status).toBe(400)
    expect(draft.body.error).toBe('PIPELINE_NOT_PUBLISHED')
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/2/publish`, { key })
    const latest = await submit({ pipeline_id: pipelineId }, [{ name: 'a.pdf', bytes: await invoicePdf() }])
    expect(latest.body.pipeline.version).toBe('v2')
    const pinned = await submit({ pipeline_id: pipelineId, version: 'v1' }, [
      { name: 'a.pdf', bytes: await invoicePdf() },
    ])
    expect(pinned.status).toBe(202)
    expect(pinned.body.pipeline.version).toBe('v1')
    const missing = await submit({ pipeline_id: pipelineId, version: 'v9' }, [
      { name: 'a.pdf', bytes: await invoicePdf() },
    ])
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('VERSION_NOT_FOUND')
  })

  it('repeated `file` is one batch job; documents counts the files; metadata is echoed on every document', async () => {
    const metadata = { customer: 'acme', batch: '7' }
    const r = await submit(
      { pipeline_id: pipelineId, version: 'v1', source_tag: 'batch-tag', metadata: JSON.stringify(metadata) },
      [
        { name: 'one.pdf', bytes: await invoicePdf() },
        { name: 'two.pdf', bytes: await textPdf([['Receipt', 'Order: 42'], ['page two']]) },
      ],
    )
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ documents: 2, source_tag: 'batch-tag', status: 'processing', stage_now: 'init' })
    const done = await waitDone(r.body.id)
    expect(done.body.status).toBe('completed')
    expect(done.body.documents).toHaveLength(2)
    for (const d of done.body.documents) {
      const doc = await call(stack.baseUrl, 'GET', `/v1/documents/${d.id}`, { key })
      expect(doc.body.metadata).toEqual(metadata)
    }
  })

  it('metadata: invalid JSON or more than 20 pairs → 400 INVALID_METADATA, no job (DESIGN)', async () => {
    const before = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
    const bad = await submit({ pipeline_id: pipelineId, metadata: '{not json' }, [
      { name: 'a.pdf', bytes: await invoicePdf() },
    ])
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('INVALID_METADATA')
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))
    const tooMany = await submit({ pipeline_id: pipelineId, metadata: JSON.stringify(many) }, [
      { name: 'a.pdf', bytes: await invoicePdf() },
    ])
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.error).toBe('INVALID_METADATA')
    // DESIGN: metadata is "one multipart field". Sent twice, neither copy is silently dropped: 400, no job.
    const twice = fileForm('file', [{ name: 'a.pdf', bytes: await invoicePdf() }], { pipeline_id: pipelineId })
    twice.append('metadata', '{"a":"1"}')
    twice.append('metadata', '{"b":"2"}')
    const repeated = await call(stack.baseUrl, 'POST', '/v1/jobs', { key, form: twice })
    expect(repeated.status).toBe(400)
    expect(repeated.body).toMatchObject({ error: 'INVALID_PARAMETER', message: expect.stringContaining('metadata') })
    // JSON escapes that decode to text no column holds (NUL, half a surrogate pair) are the client's error.
    for (const metadata of ['{"k":"a\\u0000b"}', '{"k\\u0000":"ab"}', '{"k":"a\\ud800b"}']) {
      const r = await submit({ pipeline_id: pipelineId, metadata }, [{ name: 'a.pdf', bytes: await invoicePdf() }])
      expect(r.status, metadata).toBe(400)
      expect(r.body.error).toBe('INVALID_METADATA')
    }
    const after = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
    expect(after.body.data.length).toBe(before.body.data.length)
  })

  it('run_kind=test charges exactly like prod and is never delivered to destinations', async () => {
    const { key: k2 } = await newWorkspace(stack.baseUrl, 'A', { credits: 10 })
    const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', { key: k2, json: { name: 'p' } })
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key: k2 })
    const pdf = await textPdf([['page 1'], ['page 2']])
    const test = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: k2,
      form: fileForm('file', [{ name: 't.pdf', bytes: pdf }], { pipeline_id: p.body.id, run_kind: 'test' }),
    })
    const prod = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: k2,
      form: fileForm('file', [{ name: 'p.pdf', bytes: pdf }], { pipeline_id: p.body.id }),
    })
    for (const r of [test, prod]) {
      const done = await pollUntil(
        () => call(stack.baseUrl, 'GET', `/v1/jobs/${r.body.id}`, { key: k2 }),
        (x) => x.body.status !== 'processing',
      )
      expect(done.body.status).toBe('completed')
    }
    const credits = await call(stack.baseUrl, 'GET', '/v1/credits', { key: k2 })
    expect(credits.body).toMatchObject({ spent: 4, reserved: 0, available: 6 })
    const testJob = await call(stack.baseUrl, 'GET', `/v1/jobs/${test.body.id}`, { key: k2 })
    const doc = await call(stack.baseUrl, 'GET', `/v1/documents/${testJob.body.documents[0].id}`, { key: k2 })
    // DESIGN: the document's event history, each stage it came through in order, and no delivery for a test run.
    expect(
      doc.body.events.map((e: { type: string; data: { stage?: string } }) =>
        e.type === 'stage_completed' ? e.data.stage : e.type,
      ),
    ).toEqual(['created', 'parse', 'split_classify', 'extract', 'validate', 'destination_skipped_test_run'])
  })

  it('source_tag filters the job list (DESIGN: GET /v1/jobs filters)', async () => {
    const r = await call(stack.baseUrl, 'GET', '/v1/jobs?source_tag=batch-tag', { key })
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeGreaterThanOrEqual(1)
    for (const j of r.body.data) expect(j.source_tag).toBe('batch-tag')
  })

  it('type is decided by content: a PNG named .pdf is processed as an image; a text file named .pdf is 422', async () => {
    const png = await textPng(['Invoice Number: PNG-1'])
    const ok = await submit({ pipeline_id: pipelineId, version: 'v1' }, [{ name: 'looks-like.pdf', bytes: png }])
    expect(ok.status).toBe(202)
    const bad = await submit({ pipeline_id: pipelineId }, [
      { name: 'fake.pdf', bytes: new TextEncoder().encode('just text, not a pdf') },
    ])
    expect(bad.status).toBe(422)
    expect(bad.body.error).toBe('UNSUPPORTED_FILE_TYPE')
  })

  it('Form A takes PDF, TIFF, PNG, JPEG or DOCX only (spec, POST /v1/jobs Form A): a GIF is 422 UNSUPPORTED_FILE_TYPE, no job', async () => {
    const before = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
    const r = await submit({ pipeline_id: pipelineId }, [{ name: 'pixel.gif', bytes: ONE_PIXEL_GIF }])
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('UNSUPPORTED_FILE_TYPE')
    const after = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key })
    expect(after.body.data.length).toBe(before.body.data.length)
  })

  it('the job list filters by Form A status (DESIGN: GET /v1/jobs filters, jobs in the form shape); Form B names are 400', async () => {
    const r = await submit({ pipeline_id: pipelineId, version: 'v1' }, [{ name: 'a.pdf', bytes: await invoicePdf() }])
    await waitDone(r.body.id)
    const all = await pollUntil(
      () => call(stack.baseUrl, 'GET', '/v1/jobs?limit=100', { key }),
      (x) => x.body.data.every((j: { status: string }) => j.status !== 'processing'),
      90_000,
    )
    // Every job is in exactly one of the four filtered lists, the one of the status it shows.
    const seen: string[] = []
    for (const status of ['processing', 'completed', 'failed', 'cancelled']) {
      const list = await call(stack.baseUrl, 'GET', `/v1/jobs?limit=100&status=${status}`, { key })
      expect(list.status).toBe(200)
      for (const j of list.body.data) expect(j.status).toBe(status)
      seen.push(...list.body.data.map((j: { id: string }) => j.id))
    }
    expect(seen.sort()).toEqual(all.body.data.map((j: { id: string }) => j.id).sort())
    const both = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100&status=completed,failed', { key })
    expect(both.body.data.map((j: { id: string }) => j.id)).toContain(r.body.id)
    // The parameter repeated reads as the same list.
    const repeated = await call(stack.baseUrl, 'GET', '/v1/jobs?limit=100&status=completed&status=failed', { key })
    expect(repeated.body.data.map((j: { id: string }) => j.id).sort()).toEqual(
      both.body.data.map((j: { id: string }) => j.id).sort(),
    )
    for (const formB of ['queued', 'completed_with_errors']) {
      const bad = await call(stack.baseUrl, 'GET', `/v1/jobs?status=${formB}`, { key })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toBe('INVALID_PARAMETER')
    }
  })

  it('GET job shows trace, machine_seconds and documents; failed jobs show failed_stage and error', async () => {
    const r = await submit({ pipeline_id: pipelineId, version: 'v1' }, [{ name: 'a.pdf', bytes: await invoicePdf() }])
    const done = await waitDone(r.body.id)
    expect(done.body).toMatchObject({ id: r.body.id, status: 'completed', machine_seconds: expect.any(Number) })
    expect(done.body.stage_now).toBeUndefined()
    expect(done.body.trace.every((t: { ok: boolean }) => t.ok)).toBe(true)
  })
})
