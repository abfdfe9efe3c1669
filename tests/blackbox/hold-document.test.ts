// Form B `partial`, black box (spec: Form B statuses, `partial` "Some documents moved on, others held for an
// operator"; DESIGN, Review, `review.hold: "document"`): in a split job the documents that pass go on through
// post_processing and destination while the parked one waits; the job reads `partial` until the last parked document
// is decided, then finishes, settles and sends job.completed once. Cancel while `partial` cancels the held documents
// only and settles what was done.
import { mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, publishPipeline } from './client.ts'
import { useStackWithReceiver } from './stack.ts'
import { purchaseOrderPipeline } from '@quire/testing'

// A directory destination: the passing document is delivered there while the parked one waits.
const out = mkdtempSync(path.join(os.tmpdir(), 'quire-hold-document-'))
const ctx = useStackWithReceiver({
  env: { QUIRE_DESTINATIONS: JSON.stringify({ out: { type: 'dir', path: out } }) },
})
const delivered = (jobId: string) =>
  (JSON.parse(readFileSync(path.join(out, `${jobId}.json`), 'utf8')).documents as Doc[]).map((d) => d.status).sort()

// Split per page: every page a purchase order; the second lacks its required PO number and is parked.
const definition = purchaseOrderPipeline({
  split: { mode: 'per_page' },
  review: { hold: 'document' },
  destination: { name: 'out' },
})
const twoPos = () =>
  textPdf([
    ['PURCHASE ORDER', 'PO Number: PO-100', 'Buyer: Contoso Ltd'],
    ['PURCHASE ORDER', 'Buyer: Fabrikam Inc', 'Delivery: next week'],
  ])

type Doc = { id: string; status: string }

async function setup(path: string) {
  const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 10 })
  await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
    key,
    json: { name: 'all', url: `${ctx.receiver.origin}${path}` },
  })
  const pipelineId = await publishPipeline(ctx.stack.baseUrl, key, 'po', definition)
  const job = (jobId: string, include = '') => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}${include}`, { key })
  const submit = async () => {
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'pos.pdf', bytes: await twoPos() }], { pipeline_id: pipelineId }),
    })
    expect(r.status).toBe(202)
    const jobId = r.body[0].job_id as string
    const partial = await pollUntil(
      () => job(jobId, '?include=stages'),
      (x) => x.body.status === 'partial' || x.body.completed_at !== null,
      90_000,
    )
    return { jobId, partial: partial.body }
  }
  const document = (id: string) => call(ctx.stack.baseUrl, 'GET', `/v1/documents/${id}`, { key })
  const documentsOf = async (jobId: string) =>
    (await call(ctx.stack.baseUrl, 'GET', `/v1/documents?job_id=${jobId}`, { key })).body.data as Doc[]
  const review = (docId: string, json: object) =>
    call(ctx.stack.baseUrl, 'POST', `/v1/documents/${docId}/review`, { key, json })
  const events = (jobId: string) =>
    ctx.receiver.received
      .filter((r) => r.path === path)
      .map((r) => JSON.parse(r.rawBody.toString('utf8')))
      .filter((b) => b.data?.job_id === jobId)
  const credits = async () => (await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })).body
  const ledger = async (jobId: string) =>
    (await call(ctx.stack.baseUrl, 'GET', `/v1/credits/ledger?job_id=${jobId}`, { key })).body.data as {
      kind: string
    }[]
  return { key, submit, job, document, documentsOf, review, events, credits, ledger }
}

describe('Form B review.hold "document" (DESIGN: the documents that pass go on; the job reads partial)', () => {
  it('DESIGN hold=document: partial while one child is parked, the passing child delivered; approve → completed, one job.completed, settled once', async () => {
    const s = await setup('/hold-approve')
    const { jobId, partial } = await s.submit()
    expect(partial.status).toBe('partial')
    expect(partial.completed_at).toBeNull()
    expect(partial.review.documents).toHaveLength(1)
    const parkedId = partial.review.documents[0].id as string
    expect(partial.review.documents[0].status).toBe('in_review')
    // The passing child went through post_processing and destination already.
    const ran = partial.stages.map((x: { stage: string; status: string }) => `${x.stage}:${x.status}`)
    expect(ran).toEqual(expect.arrayContaining(['post_processing:completed', 'destination:completed']))
    const docs = await s.documentsOf(jobId)
    const passing = docs.find((d) => d.id !== parkedId && d.status === 'completed')
    expect(passing).toBeDefined()
    const passed = await s.document(passing!.id)
    expect(passed.body.status).toBe('completed')
    expect(passed.body.data.po_number.value).toBe('PO-100')
    // The destination has the passing document; the parked one is named, not delivered.
    expect(delivered(jobId)).toEqual(['completed', 'in_review'])
    // Nothing settled and no job.completed while partial; it stays partial until a decision.
    expect(await s.credits()).toMatchObject({ reserved: 2, spent: 0 })
    await new Promise((r) => setTimeout(r, 1500))
    expect((await s.job(jobId)).body.status).toBe('partial')
    expect(s.events(jobId).some((e) => e.event === 'job.completed')).toBe(false)

    const approved = await s.review(parkedId, { action: 'approve', data: { po_number: 'PO-200' } })
    expect(approved.status).toBe(200)
    const done = await pollUntil(
      () => s.job(jobId, '?include=result'),
      (x) => x.body.completed_at !== null,
      60_000,
    )
    expect(done.body.status).toBe('completed')
    const numbers = done.body.result.documents.map(
      (d: { data: { po_number?: { value: string } } }) => d.data.po_number?.value,
    )
    expect(numbers).toEqual(expect.arrayContaining(['PO-100', 'PO-200']))
    // The destination file of the job is replaced, now with both documents delivered.
    expect(delivered(jobId)).toEqual(['completed', 'completed'])
    await pollUntil(
      async () => s.events(jobId),
      (e) => e.some((x) => x.event === 'job.completed'),
      30_000,
    )
    await new Promise((r) => setTimeout(r, 1500))
    const order = s.events(jobId).map((e) => e.event)
    expect(order.filter((e) => e === 'job.completed')).toHaveLength(1)
    // No event twice: post_processing and destination running again for the decided document send nothing new.
    expect(order.filter((e) => e === 'document.extracted')).toHaveLength(2)
    expect(order.filter((e) => e === 'review.approved')).toHaveLength(1)
    expect(order.filter((e) => e === 'job.started')).toHaveLength(1)
    expect(order.indexOf('job.completed')).toBeGreaterThan(order.indexOf('review.approved'))
    expect(await s.credits()).toMatchObject({ available: 8, reserved: 0, spent: 2 })
    expect((await s.ledger(jobId)).filter((e) => e.kind === 'settle')).toHaveLength(1)
  }, 180_000)

  it('issue 38 cancel while partial: only the held document is cancelled, what was delivered is settled, job cancelled, no job.completed', async () => {
    const s = await setup('/hold-cancel')
    const { jobId, partial } = await s.submit()
    expect(partial.status).toBe('partial')
    const parkedId = partial.review.documents[0].id as string
    const cancelled = await call(ctx.stack.baseUrl, 'POST', `/v1/jobs/${jobId}/cancel`, { key: s.key })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')
    const docs = await s.documentsOf(jobId)
    expect((await s.document(parkedId)).body.status).toBe('cancelled')
    expect(docs.filter((d) => d.id !== parkedId && d.status === 'completed')).toHaveLength(1)
    // One page delivered: one credit spent, the other released.
    expect(await s.credits()).toMatchObject({ available: 9, reserved: 0, spent: 1 })
    expect((await s.ledger(jobId)).filter((e) => e.kind === 'settle')).toHaveLength(1)
    const late = await s.review(parkedId, { action: 'approve', data: { po_number: 'PO-300' } })
    expect(late.status).toBe(409)
    await new Promise((r) => setTimeout(r, 1500))
    expect((await s.job(jobId)).body.status).toBe('cancelled')
    expect(s.events(jobId).some((e) => e.event === 'job.completed')).toBe(false)
  }, 180_000)
})
