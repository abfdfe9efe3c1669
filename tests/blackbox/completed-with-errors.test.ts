// completed_with_errors, black box (DESIGN, "Processing lifecycle"): one document of several failing (a bad file of
// a Form A batch, a split child) does not sink the others. The job finishes with the good documents' data and the
// failed one's error; Form A shows `completed` and fires `job.completed`; credits settle for what was processed.
import { beforeAll, describe, expect, it } from 'vitest'
import { damagedFiles, pdfWithDamagedPage, type DamagedCase } from '../fixtures/damaged-files.ts'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()
let truncatedPdf: DamagedCase
const splitPages = [
  ['INVOICE', 'Invoice Number: SPLIT-1', 'Total Due: 10.00 EUR'],
  ['INVOICE', 'Invoice Number: SPLIT-2', 'Total Due: 20.00 EUR'],
  ['INVOICE', 'Invoice Number: SPLIT-3', 'Total Due: 30.00 EUR'],
]
beforeAll(async () => {
  truncatedPdf = (await damagedFiles()).find((c) => c.name === 'truncated.pdf')!
})

const bodyOf = (r: { rawBody: Buffer }) => JSON.parse(r.rawBody.toString('utf8'))

async function formAPipeline(key: string, hookPath: string, definition: Record<string, unknown> = {}) {
  const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
    key,
    json: {
      name: `h-${hookPath}`,
      url: `${ctx.receiver.origin}${hookPath}`,
      auth_type: 'NONE',
      events: ['job.completed'],
    },
  })
  const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
    key,
    json: { name: 'p', definition: { ...definition, bindings: { destination: { exit_webhook_id: hook.body.id } } } },
  })
  expect(p.status).toBe(201)
  await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
  return p.body.id as string
}

describe('Form A batch with one bad file', () => {
  it('completes with the good document and the bad one failed with its error; job.completed; 1 credit spent', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A', { credits: 20 })
    const pipelineId = await formAPipeline(key, '/a-batch', {
      schemas: {},
      routing: { catch_all_schema_id: 'invoice' },
    })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm(
        'file',
        [
          { name: 'good.pdf', bytes: await invoicePdf() },
          { name: truncatedPdf.name, bytes: truncatedPdf.bytes },
        ],
        { pipeline_id: pipelineId },
      ),
    })
    expect(r.status).toBe(202)
    expect(r.body.documents).toBe(2)
    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${r.body.id}`, { key }),
      (x) => x.body.status !== 'processing',
      60_000,
    )
    // Spec Form A: completed_with_errors shows as completed; failed_stage/error are for `failed` jobs only.
    expect(done.body.status).toBe('completed')
    expect(done.body.failed_stage).toBeUndefined()
    const [good, bad] = done.body.documents
    expect(good).toMatchObject({ status: 'completed' })
    expect(good.error).toBeUndefined()
    expect(bad).toMatchObject({ status: 'failed', error: expect.stringContaining(truncatedPdf.name) })
    expect(done.body.trace).toContainEqual({ stage: 'init', ms: expect.any(Number), ok: false })
    const doc = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${good.id}`, { key })
    expect(doc.body.data.invoice_number.value).toBe('INV-2026-0042')
    expect(doc.body.error).toBeUndefined()
    // The failed document carries its error, and its history reads in order: created, then failed.
    const badDoc = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${bad.id}`, { key })
    expect(badDoc.body).toMatchObject({
      status: 'failed',
      error: { code: expect.any(String), message: expect.stringContaining(truncatedPdf.name) },
    })
    expect(badDoc.body.events.map((e: { type: string }) => e.type)).toEqual(['created', 'failed'])
    // Spec: job.completed fires for a job finished as completed_with_errors.
    // The webhook is also the destination exit binding: wait for the job event itself, whichever arrives first.
    const event = await ctx.receiver.waitFor(
      (q) => q.path === '/a-batch' && bodyOf(q).job_id === r.body.id && bodyOf(q).type === 'job.completed',
      30_000,
    )
    expect(bodyOf(event)).toMatchObject({ type: 'job.completed', job_id: r.body.id })
    // Reserved 1 page per file (the bad one could not be counted); settled for the one page processed.
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 19, reserved: 0, spent: 1 })
  }, 120_000)
})

describe('split job with one failing child', () => {
  it('Form A: the readable children complete with data, the damaged page fails; completed; job.completed', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A', { credits: 20 })
    const pipelineId = await formAPipeline(key, '/a-split', {
      split: { mode: 'per_page' },
      routing: { catch_all_schema_id: 'invoice' },
    })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'three.pdf', bytes: await pdfWithDamagedPage(splitPages, 2) }], {
        pipeline_id: pipelineId,
      }),
    })
    expect(r.status).toBe(202)
    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${r.body.id}`, { key }),
      (x) => x.body.status !== 'processing',
      90_000,
    )
    expect(done.body.status).toBe('completed')
    const statuses = done.body.documents.map((d: { status: string }) => d.status).sort()
    expect(statuses).toEqual(['completed', 'completed', 'failed', 'split'])
    const failed = done.body.documents.find((d: { status: string }) => d.status === 'failed')
    expect(failed.error).toContain('page 2')
    const numbers: string[] = []
    for (const d of done.body.documents.filter((x: { status: string }) => x.status === 'completed')) {
      numbers.push(
        (await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${d.id}`, { key })).body.data.invoice_number.value,
      )
    }
    expect(numbers.sort()).toEqual(['SPLIT-1', 'SPLIT-3'])
    const event = await ctx.receiver.waitFor(
      (q) => q.path === '/a-split' && bodyOf(q).job_id === r.body.id && bodyOf(q).type === 'job.completed',
      30_000,
    )
    expect(bodyOf(event)).toMatchObject({ type: 'job.completed', job_id: r.body.id })
    // 3 pages reserved, 2 processed.
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 18, reserved: 0, spent: 2 })
  }, 150_000)

  it('Form B: completed_with_errors, error names the stage, no result (only on completed), the stage trace names the page', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 20 })
    await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'b', url: `${ctx.receiver.origin}/b-split`, events: ['job.completed'] },
    })
    const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'split', definition: { split: { mode: 'per_page' }, routing: { catch_all_schema_id: 'invoice' } } },
    })
    await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'three.pdf', bytes: await pdfWithDamagedPage(splitPages, 2) }], {
        pipeline_id: p.body.id,
      }),
    })
    const jobId = r.body[0].job_id
    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages,result`, { key }),
      (x) => x.body.completed_at !== null,
      90_000,
    )
    expect(done.body.status).toBe('completed_with_errors')
    expect(done.body.error).toMatchObject({ code: 'unreadable_pages', stage: 'split_classify' })
    // Spec (Job, Form B): result only when status is `completed`.
    expect(done.body.result).toBeUndefined()
    const split = done.body.stages.find((s: { stage: string }) => s.stage === 'split_classify')
    expect(split).toMatchObject({ status: 'completed', error: expect.stringContaining('page 2') })
    const event = await ctx.receiver.waitFor((q) => q.path === '/b-split' && bodyOf(q).data.job_id === jobId, 30_000)
    expect(bodyOf(event)).toMatchObject({ event: 'job.completed', data: { status: 'completed_with_errors' } })
    // The good documents' data and the failed child stay readable, by the ids the job.completed delivery lists.
    const docs = await Promise.all(
      (bodyOf(event).data.documents as string[]).map(
        async (id) => (await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${id}`, { key })).body,
      ),
    )
    expect(
      docs
        .filter((d) => d.status !== 'failed')
        .map((d) => d.data.invoice_number.value)
        .sort(),
    ).toEqual(['SPLIT-1', 'SPLIT-3'])
    expect(docs.find((d) => d.status === 'failed')).toMatchObject({ pages: [2] })
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 18, reserved: 0, spent: 2 })
  }, 150_000)
})
