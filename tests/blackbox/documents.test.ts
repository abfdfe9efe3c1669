// Documents and review, black box (DESIGN: GET /v1/documents/{id}, POST /v1/documents/{id}/review).
import { purchaseOrderPipeline } from '@quire/testing'
import { describe, expect, it } from 'vitest'
import { textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()

// A purchase order with no PO number: the pipeline's required field is missing, so the document is parked. No
// post-processing here (the shared definition turns it on).
const definition = (bindings: object = {}) => purchaseOrderPipeline({ bindings, post_processing: { enabled: false } })
const poPdf = () => textPdf([['PURCHASE ORDER', 'Buyer: Contoso Ltd', 'Delivery: next week']])

describe('review', () => {
  it('Form A: a missing required field parks the document in_review, the job completes, and job.review_required is delivered', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A')
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'rv', url: ctx.receiver.url, auth_type: 'NONE', events: ['job.review_required'] },
    })
    const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'po', definition: definition({ parse: { entry_webhook_id: hook.body.id } }) },
    })
    await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const job = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'po.pdf', bytes: await poPdf() }], { pipeline_id: p.body.id }),
    })
    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${job.body.id}`, { key }),
      (r) => r.body.status !== 'processing',
    )
    // spec: a job can be completed while its documents are in_review
    expect(done.body.status).toBe('completed')
    expect(done.body.documents[0].status).toBe('in_review')
    const delivery = await ctx.receiver.waitFor(
      (r) => r.rawBody.toString().includes(job.body.id) && r.rawBody.toString().includes('job.review_required'),
      20_000,
    )
    expect(JSON.parse(delivery.rawBody.toString())).toMatchObject({
      type: 'job.review_required',
      job_id: job.body.id,
      data: {},
    })
  })

  it('Form B: the job waits in awaiting_review; approve with a correction completes the document and the job, sends review.approved; a second decision → 409', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'rv-b', url: ctx.receiver.url, events: ['review.approved'] },
    })
    expect(hook.status).toBe(201)
    const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'po', definition: definition() },
    })
    await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const job = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'po.pdf', bytes: await poPdf() }], { pipeline_id: p.body.id }),
    })
    const jobId = job.body[0].job_id
    // DESIGN: Form B waits in awaiting_review (not final) until every parked document is decided.
    const waiting = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status === 'awaiting_review',
    )
    expect(waiting.body.completed_at).toBeNull()
    const docId = waiting.body.review.documents[0].id
    const parked = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${docId}`, { key })
    expect(parked.body).toMatchObject({ status: 'in_review', job_id: jobId, type: 'po', schema_id: 'po' })
    expect(parked.body.data.buyer.value).toBe('Contoso Ltd')
    expect(parked.body.data.po_number).toEqual({ value: null, confidence: 0 })

    const approved = await call(ctx.stack.baseUrl, 'POST', `/v1/documents/${docId}/review`, {
      key,
      json: { action: 'approve', data: { po_number: 'PO-77' } },
    })
    expect(approved.status).toBe(200)
    expect(approved.body.status).toBe('completed')
    expect(approved.body.data.po_number).toEqual({ value: 'PO-77', confidence: 1 })
    expect(approved.body.events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['review_required', 'review_approve']),
    )
    await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status === 'completed',
    )
    const delivery = await ctx.receiver.waitFor(
      (r) => r.rawBody.toString().includes(docId) && r.rawBody.toString().includes('review.approved'),
      20_000,
    )
    expect(JSON.parse(delivery.rawBody.toString())).toMatchObject({
      event: 'review.approved',
      webhook_id: hook.body.id,
    })
    // DESIGN: a document carries its event history: made in initialization, each per-document stage it came
    // through (split_classify with its type and schema), parked, decided, delivered; in the order they happened.
    const history = (await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${docId}`, { key })).body.events as {
      type: string
      data: { stage?: string; type?: string; schema_id?: string }
      at: string
    }[]
    expect(history.map((e) => (e.type === 'stage_completed' ? `${e.type}:${e.data.stage}` : e.type))).toEqual([
      'created',
      'stage_completed:parse',
      'stage_completed:split_classify',
      'stage_completed:extract',
      'review_required',
      'review_approve',
      'delivered',
    ])
    expect(history[0]!.data).toMatchObject({ stage: 'initialization' })
    expect(history[2]!.data).toMatchObject({ type: 'po', schema_id: 'po' })
    const times = history.map((e) => Date.parse(e.at))
    expect([...times].sort((a, b) => a - b)).toEqual(times)
    const again = await call(ctx.stack.baseUrl, 'POST', `/v1/documents/${docId}/review`, {
      key,
      json: { action: 'reject' },
    })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('DOCUMENT_NOT_IN_REVIEW')
    const bad = await call(ctx.stack.baseUrl, 'POST', `/v1/documents/${docId}/review`, {
      key,
      json: { action: 'maybe' },
    })
    expect(bad.status).toBe(400)
  })

  it('a document of another workspace is not found', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const r = await call(ctx.stack.baseUrl, 'GET', '/v1/documents/doc_someone_elses_0', { key })
    expect(r.status).toBe(404)
  })
})
