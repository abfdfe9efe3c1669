// Form B awaiting_review, black box (spec: Form B statuses; DESIGN, "Processing lifecycle", Review): a document parked
// after validate makes a Form B job wait in `awaiting_review` (not final) until every parked document is decided via
// POST /v1/documents/{id}/review; the job then resumes (post_processing, destination, settlement, job.completed).
import { describe, expect, it } from 'vitest'
import { textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, publishPipeline } from './client.ts'
import { useStackWithReceiver } from './stack.ts'
import { purchaseOrderPipeline } from '@quire/testing'

const ctx = useStackWithReceiver()

// A purchase order whose required PO number is missing: parked in_review after validate.
const definition = purchaseOrderPipeline()
const poPdf = () => textPdf([['PURCHASE ORDER', 'Buyer: Contoso Ltd', 'Delivery: next week']])

async function setup(path: string) {
  const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 10 })
  await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
    key,
    json: { name: 'all', url: `${ctx.receiver.origin}${path}` },
  })
  const pipelineId = await publishPipeline(ctx.stack.baseUrl, key, 'po', definition)
  const submit = async () => {
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'po.pdf', bytes: await poPdf() }], { pipeline_id: pipelineId }),
    })
    expect(r.status).toBe(202)
    const jobId = r.body[0].job_id as string
    const waiting = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages`, { key }),
      (x) => x.body.status === 'awaiting_review',
      60_000,
    )
    return { jobId, waiting: waiting.body, docId: waiting.body.review.documents[0].id as string }
  }
  const job = (jobId: string, include = '') => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}${include}`, { key })
  const review = (docId: string, json: object) =>
    call(ctx.stack.baseUrl, 'POST', `/v1/documents/${docId}/review`, { key, json })
  const events = (jobId: string) =>
    ctx.receiver.received
      .filter((r) => r.path === path)
      .map((r) => JSON.parse(r.rawBody.toString('utf8')))
      .filter((b) => b.data?.job_id === jobId)
  const credits = async () => (await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })).body
  return { key, submit, job, review, events, credits }
}

/** Waits until the job is final, then a little longer for its last events to be delivered. */
async function finished(s: Awaited<ReturnType<typeof setup>>, jobId: string) {
  const done = await pollUntil(
    () => s.job(jobId, '?include=stages,result'),
    (x) => x.body.completed_at !== null,
    60_000,
  )
  await pollUntil(
    async () => s.events(jobId),
    (e) => e.some((x) => x.event === 'job.completed' || x.event === 'job.failed'),
    30_000,
  )
  return done.body
}

describe('Form B awaiting_review', () => {
  it('waits (not final, nothing after validate, hold kept); approve resumes: post_processing, destination, settled once, job.completed after review.approved', async () => {
    const s = await setup('/approve')
    const { jobId, waiting, docId } = await s.submit()
    expect(waiting.completed_at).toBeNull()
    expect(waiting.review.documents).toEqual([{ id: docId, status: 'in_review' }])
    const ran = waiting.stages.map((x: { stage: string }) => x.stage)
    expect(ran).toContain('validate')
    expect(ran).not.toContain('post_processing')
    expect(await s.credits()).toMatchObject({ reserved: 1, spent: 0 })
    // Still waiting a moment later: nothing moves it on but a decision.
    await new Promise((r) => setTimeout(r, 1500))
    expect((await s.job(jobId)).body.status).toBe('awaiting_review')

    const approved = await s.review(docId, { action: 'approve', data: { po_number: 'PO-1' } })
    expect(approved.status).toBe(200)
    const done = await finished(s, jobId)
    expect(done.status).toBe('completed')
    expect(done.stages.map((x: { stage: string; status: string }) => `${x.stage}:${x.status}`)).toEqual(
      expect.arrayContaining(['post_processing:completed', 'destination:completed']),
    )
    expect(done.result.documents[0].data.po_number).toEqual({ value: 'PO-1', confidence: 1 })
    const order = s.events(jobId).map((e) => e.event)
    expect(order.indexOf('review.approved')).toBeGreaterThanOrEqual(0)
    expect(order.indexOf('job.completed')).toBeGreaterThan(order.indexOf('review.approved'))
    expect(order.filter((e) => e === 'job.completed')).toHaveLength(1)
    // Credits settled once, for the one page.
    expect(await s.credits()).toMatchObject({ available: 9, reserved: 0, spent: 1 })
    const ledger = await call(ctx.stack.baseUrl, 'GET', `/v1/credits/ledger?job_id=${jobId}`, { key: s.key })
    expect(ledger.body.data.filter((e: { kind: string }) => e.kind === 'settle')).toHaveLength(1)
  }, 150_000)

  it('reject with corrected data (bare or {value}) is validated again: still missing → stays parked; valid → the job goes on', async () => {
    const s = await setup('/reject')
    const { jobId, docId } = await s.submit()
    // Corrections are checked against the schema first: a field it does not have is refused and nothing changes.
    const unknown = await s.review(docId, { action: 'reject', data: { po_number: 'PO-7', nosuch: 'x' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ error: 'INVALID_PARAMETER', message: expect.stringContaining('nosuch') })
    // DESIGN (Extraction): "a field not found reads {value: null, confidence: 0}", a correction to null too.
    const cleared = await s.review(docId, { action: 'reject', data: { po_number: null } })
    expect(cleared.status).toBe(200)
    expect(cleared.body.status).toBe('in_review')
    expect(cleared.body.data.po_number).toEqual({ value: null, confidence: 0 })
    expect(cleared.body.data.nosuch).toBeUndefined()
    const stillBad = await s.review(docId, { action: 'reject', data: { buyer: 'Fabrikam' } })
    expect(stillBad.status).toBe(200)
    expect(stillBad.body.status).toBe('in_review')
    expect((await s.job(jobId)).body.status).toBe('awaiting_review')
    // A correction may also come in the shape the document shows its data ({value, confidence}).
    const fixed = await s.review(docId, { action: 'reject', data: { po_number: { value: 'PO-9', confidence: 0.5 } } })
    expect(fixed.status).toBe(200)
    const done = await finished(s, jobId)
    expect(done.status).toBe('completed')
    expect(done.result.documents[0].data).toMatchObject({
      po_number: { value: 'PO-9', confidence: 1 },
      buyer: { value: 'Fabrikam', confidence: 1 },
    })
    const order = s.events(jobId).map((e) => e.event)
    expect(order.filter((e) => e === 'review.rejected')).toHaveLength(3)
    expect(await s.credits()).toMatchObject({ available: 9, reserved: 0, spent: 1 })
  }, 150_000)

  it('escalate keeps it parked (review.escalated); approving the escalated document later resumes it', async () => {
    const s = await setup('/escalate')
    const { jobId, docId } = await s.submit()
    const escalated = await s.review(docId, { action: 'escalate' })
    expect(escalated.body.status).toBe('escalated')
    await pollUntil(
      async () => s.events(jobId),
      (e) => e.some((x) => x.event === 'review.escalated'),
      30_000,
    )
    const still = await s.job(jobId)
    expect(still.body.status).toBe('awaiting_review')
    expect(still.body.review.documents).toEqual([{ id: docId, status: 'escalated' }])
    await s.review(docId, { action: 'approve', data: { po_number: 'PO-3' } })
    expect((await finished(s, jobId)).status).toBe('completed')
  }, 150_000)

  it('cancel works while waiting: cancelled, hold released, no job.completed, the parked document cancelled and refusing a decision (409)', async () => {
    const s = await setup('/cancel')
    const { jobId, docId } = await s.submit()
    const cancelled = await call(ctx.stack.baseUrl, 'POST', `/v1/jobs/${jobId}/cancel`, { key: s.key })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')
    expect(await s.credits()).toMatchObject({ available: 10, reserved: 0, spent: 0 })
    const doc = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${docId}`, { key: s.key })
    expect(doc.body.status).toBe('cancelled')
    const late = await s.review(docId, { action: 'approve', data: { po_number: 'PO-4' } })
    expect(late.status).toBe(409)
    expect(late.body).toMatchObject({ error: 'DOCUMENT_NOT_IN_REVIEW', message: expect.any(String) })
    await new Promise((r) => setTimeout(r, 2000))
    expect((await s.job(jobId)).body.status).toBe('cancelled')
    expect(s.events(jobId).some((e) => e.event === 'job.completed')).toBe(false)
    expect(await s.credits()).toMatchObject({ available: 10, reserved: 0, spent: 0 })
  }, 120_000)
})
