// The review desk in a real browser (DESIGN, "Processing lifecycle", Review desk; issue 38): headless Chromium
// (Debian's `chromium`, driven by playwright-core) signs in at /review with an API key, works the queue of parked
// documents by keyboard only, and the API shows the decision: the corrected value, one settlement, one
// `review.approved`. Also the desk API (GET /v1/documents, GET /v1/documents/{id}/pages/{n}), the sign-in refusals,
// the CSP, the key kept out of URLs and logs, and axe-core on the queue and the document view. Screenshots go to
// .scratch/test-output/review-desk/.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf, textPdf } from '../fixtures/make-fixtures.ts'
import { purchaseOrderPipeline } from '@quire/testing'
import { call, fileForm, newWorkspace, pollUntil, publishPipeline } from './client.ts'
import { launchChromium } from './browser.ts'
import { ADMIN_TOKEN, useStackWithReceiver } from './stack.ts'

const OUT = path.join(import.meta.dirname, '..', '..', '.scratch', 'test-output', 'review-desk')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

// Every found field of a built-in invoice is below a bar of 1: the document is parked by the review bar.
const definition = {
  document_types: [{ name: 'invoice', keywords: ['invoice'], schema_id: 'invoice' }],
  review: { min_confidence: 1 },
}

// A directory destination for the split job of review.hold "document".
const DEST = mkdtempSync(path.join(os.tmpdir(), 'quire-desk-dest-'))
const ctx = useStackWithReceiver({
  env: { QUIRE_DESTINATIONS: JSON.stringify({ out: { type: 'dir', path: DEST } }) },
})
let browser: Browser

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true })
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

async function setup(form: 'A' | 'B', hookPath: string, scopes?: string[]) {
  const base = ctx.stack.baseUrl
  const { key, workspaceId } = await newWorkspace(base, form, { credits: 20, scopes })
  const full = scopes ? (await newWorkspace(base, form, { credits: 20 })).key : key
  if (form === 'B') {
    await call(base, 'POST', '/v1/webhooks', {
      key: full,
      json: { name: 'all', url: `${ctx.receiver.origin}${hookPath}` },
    })
  }
  return { key, workspaceId, pipelineId: await publishPipeline(base, full, 'desk', definition) }
}

async function submitParked(key: string, pipelineId: string, form: 'A' | 'B') {
  const base = ctx.stack.baseUrl
  const r = await call(base, 'POST', '/v1/jobs', {
    key,
    form: fileForm(form === 'B' ? 'files' : 'file', [{ name: 'invoice.pdf', bytes: await invoicePdf() }], {
      pipeline_id: pipelineId,
    }),
  })
  expect(r.status).toBe(202)
  const jobId = (Array.isArray(r.body) ? r.body[0].job_id : (r.body.job_id ?? r.body.id)) as string
  const parked = await pollUntil(
    () => call(base, 'GET', `/v1/documents?job_id=${jobId}&status=in_review`, { key }),
    (x) => x.status === 200 && x.body.data.length === 1,
    90_000,
  )
  return { jobId, docId: parked.body.data[0].id as string }
}

/** Opens the desk in a fresh browser context, records every request URL, and signs in by keyboard. */
async function openDesk(key: string) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
  const page = await context.newPage()
  const urls: string[] = []
  page.on('request', (r) => urls.push(r.url()))
  const res = await page.goto(`${ctx.stack.baseUrl}/review`)
  expect(res?.status()).toBe(200)
  expect(res?.headers()['content-security-policy']).toBe("default-src 'self'")
  await page.locator('#api-key').waitFor()
  await page.keyboard.type(key)
  await page.keyboard.press('Enter')
  return { page, context, urls }
}

async function axeViolations(page: Page) {
  // page.evaluate runs through the DevTools protocol, so the desk's CSP (no inline script) does not stop axe.
  await page.evaluate(AXE)
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run: () => Promise<unknown> } }).axe.run(),
  )) as { violations: { id: string; impact: string; nodes: unknown[] }[] }
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/** Presses `f` until the field `name` is the selected one (keyboard only). */
async function selectField(page: Page, name: string) {
  for (let i = 0; i < 30; i++) {
    const current = await page
      .locator('.field-row.selected input')
      .getAttribute('data-field')
      .catch(() => null)
    if (current === name) return
    await page.keyboard.press('f')
  }
  throw new Error(`field ${name} never selected`)
}

const events = (hookPath: string, jobId: string) =>
  ctx.receiver.received
    .filter((r) => r.path === hookPath)
    .map((r) => JSON.parse(r.rawBody.toString('utf8')))
    .filter((b) => (b.data?.job_id ?? b.job_id) === jobId)

describe('review desk API (DESIGN: Review desk)', () => {
  it('GET /v1/documents lists parked documents oldest first in keyset pages; GET .../pages/{n} is a PNG of at most 2000 px with ETag, 304 and 404 past the last page', async () => {
    const base = ctx.stack.baseUrl
    const s = await setup('B', '/api')
    const first = await submitParked(s.key, s.pipelineId, 'B')
    const second = await submitParked(s.key, s.pipelineId, 'B')
    const page1 = await call(base, 'GET', '/v1/documents?status=in_review,escalated&limit=1', { key: s.key })
    expect(page1.status).toBe(200)
    expect(page1.body.data.map((d: { id: string }) => d.id)).toEqual([first.docId])
    expect(page1.body.data[0]).toMatchObject({ job_id: first.jobId, pipeline_id: s.pipelineId, schema_id: 'invoice' })
    expect(page1.body.data[0].review_problems.length).toBeGreaterThan(0)
    expect(page1.body.page.has_more).toBe(true)
    const page2 = await call(
      base,
      'GET',
      `/v1/documents?status=in_review&limit=1&cursor=${page1.body.page.next_cursor}`,
      {
        key: s.key,
      },
    )
    expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([second.docId])
    expect(page2.body.page).toEqual({ next_cursor: null, has_more: false })
    const other = await call(base, 'GET', `/v1/documents?pipeline_id=pln_nosuch`, { key: s.key })
    expect(other.body.data).toEqual([])
    const badStatus = await call(base, 'GET', '/v1/documents?status=In-Review', { key: s.key })
    expect(badStatus.status).toBe(400)

    const url = `${base}/v1/documents/${first.docId}/pages/1`
    const img = await fetch(url, { headers: { 'X-API-Key': s.key } })
    expect(img.status).toBe(200)
    expect(img.headers.get('content-type')).toBe('image/png')
    expect(img.headers.get('cache-control')).toMatch(/max-age/)
    const etag = img.headers.get('etag')!
    expect(etag).toBeTruthy()
    const meta = await sharp(Buffer.from(await img.arrayBuffer())).metadata()
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(2000)
    // The page's own shape (A4, 595 × 842 pt), as the bbox fractions are of it.
    expect(meta.width! / meta.height!).toBeCloseTo(595 / 842, 2)
    const again = await fetch(url, { headers: { 'X-API-Key': s.key, 'If-None-Match': etag } })
    expect(again.status).toBe(304)
    const past = await call(base, 'GET', `/v1/documents/${first.docId}/pages/2`, { key: s.key })
    expect(past.status).toBe(404)
    const stranger = await newWorkspace(base, 'B')
    const foreign = await call(base, 'GET', `/v1/documents/${first.docId}/pages/1`, { key: stranger.key })
    expect(foreign.status).toBe(404)
    // Declared once in the route registry: both forms' API descriptions carry them with their scope.
    for (const form of ['A', 'B']) {
      const doc = (await call(base, 'GET', `/v1/openapi.json?form=${form}`)).body
      expect(doc.paths['/v1/documents'].get.operationId).toBe('listDocuments')
      expect(doc.paths['/v1/documents/{id}/pages/{n}'].get.responses['200'].content).toHaveProperty(['image/png'])
    }
    const noScope = await newWorkspace(base, 'B', { scopes: ['jobs:read'] })
    expect((await call(base, 'GET', '/v1/documents', { key: noScope.key })).status).toBe(403)
  }, 240_000)
})

describe('review desk in a browser (DESIGN: Review desk; spec: POST /v1/documents/{id}/review)', () => {
  it('Form B: a document parked by the review bar is in the queue; its amount box sits at bbox × image size; corrected by keyboard and approved, the job completes with the value, settles once and sends one review.approved', async () => {
    const base = ctx.stack.baseUrl
    const s = await setup('B', '/desk-b')
    const one = await submitParked(s.key, s.pipelineId, 'B')
    const two = await submitParked(s.key, s.pipelineId, 'B')
    const { page, context, urls } = await openDesk(s.key)

    // The queue: both parked documents, oldest first, with the count and the fields that parked them.
    const rows = page.locator('.queue-table tbody tr')
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2)
    expect(await rows.nth(0).textContent()).toContain(one.docId)
    expect(await rows.nth(1).textContent()).toContain(two.docId)
    expect(await page.locator('.count').first().textContent()).toContain('2 documents waiting')
    expect(await rows.nth(0).textContent()).toContain('amount')
    expect(await axeViolations(page)).toEqual([])
    await page.screenshot({ path: path.join(OUT, 'form-b-queue.png'), fullPage: true })

    // Enter opens the selected (oldest) document.
    await page.keyboard.press('Enter')
    const box = page.locator('.box[data-field="amount"]')
    await box.waitFor({ state: 'visible', timeout: 30_000 })
    const doc = (await call(base, 'GET', `/v1/documents/${one.docId}`, { key: s.key })).body
    const bbox = doc.data.amount.bbox as [number, number, number, number]
    expect(bbox).toHaveLength(4)
    const canvas = (await page.locator('.page-canvas').first().boundingBox())!
    const drawn = (await box.boundingBox())!
    expect(Math.abs(drawn.x - (canvas.x + bbox[0] * canvas.width))).toBeLessThanOrEqual(3)
    expect(Math.abs(drawn.y - (canvas.y + bbox[1] * canvas.height))).toBeLessThanOrEqual(3)
    expect(Math.abs(drawn.x + drawn.width - (canvas.x + bbox[2] * canvas.width))).toBeLessThanOrEqual(3)
    expect(Math.abs(drawn.y + drawn.height - (canvas.y + bbox[3] * canvas.height))).toBeLessThanOrEqual(3)
    expect(await axeViolations(page)).toEqual([])

    // Keyboard only: f to the amount (its box is selected with it), Enter to edit, type, Enter, a to approve.
    await selectField(page, 'amount')
    expect(await box.getAttribute('aria-pressed')).toBe('true')
    await page.keyboard.press('Enter')
    await page.keyboard.type('1250.50')
    await page.keyboard.press('Enter')
    await page.screenshot({ path: path.join(OUT, 'form-b-document.png'), fullPage: true })
    await page.keyboard.press('a')

    // The next document opens after the decision.
    await page.locator(`h2:has-text("${two.docId}")`).waitFor({ timeout: 15_000 })
    const done = await pollUntil(
      () => call(base, 'GET', `/v1/jobs/${one.jobId}?include=result`, { key: s.key }),
      (x) => x.body.completed_at !== null,
      60_000,
    )
    expect(done.body.status).toBe('completed')
    expect(done.body.result.documents[0].data.amount).toMatchObject({ value: 1250.5, confidence: 1 })
    const ledger = await call(base, 'GET', `/v1/credits/ledger?job_id=${one.jobId}`, { key: s.key })
    expect(ledger.body.data.filter((e: { kind: string }) => e.kind === 'settle')).toHaveLength(1)
    const sent = await pollUntil(
      async () => events('/desk-b', one.jobId).map((e) => e.event),
      (e) => e.includes('job.completed'),
      30_000,
    )
    expect(sent.filter((e) => e === 'review.approved')).toHaveLength(1)
    expect(sent.filter((e) => e === 'job.completed')).toHaveLength(1)

    // Decided elsewhere meanwhile: the desk says so and keeps the typing.
    await call(base, 'POST', `/v1/documents/${two.docId}/review`, { key: s.key, json: { action: 'approve' } })
    await selectField(page, 'invoice_number')
    await page.keyboard.press('Enter')
    await page.keyboard.type('INV-TYPED')
    await page.keyboard.press('Enter')
    await page.keyboard.press('a')
    await expect
      .poll(() => page.locator('[role="alert"]').textContent(), { timeout: 10_000 })
      .toContain('decided elsewhere')
    expect(await page.locator('input[data-field="invoice_number"]').inputValue()).toBe('INV-TYPED')
    await page.screenshot({ path: path.join(OUT, 'form-b-decided-elsewhere.png'), fullPage: true })

    // `?` lists the keys.
    await page.keyboard.press('?')
    await page.locator('[role="dialog"]').waitFor()
    expect(await page.locator('[role="dialog"]').textContent()).toContain('approve')
    await page.screenshot({ path: path.join(OUT, 'form-b-help.png') })

    // The key went only in a header: in no URL, and in no line the API logged.
    expect(urls.some((u) => u.includes(s.key))).toBe(false)
    expect(ctx.stack.logs.api.join('').includes(s.key)).toBe(false)
    await context.close()
  }, 300_000)

  it('Form A: the same keyboard approval; the job stays completed and the document ends approved', async () => {
    const base = ctx.stack.baseUrl
    const s = await setup('A', '/desk-a')
    const one = await submitParked(s.key, s.pipelineId, 'A')
    const before = await call(base, 'GET', `/v1/jobs/${one.jobId}`, { key: s.key })
    expect(before.body.status).toBe('completed')
    const { page, context } = await openDesk(s.key)
    await page.locator('.queue-table tbody tr').first().waitFor({ timeout: 15_000 })
    await page.keyboard.press('Enter')
    await page.locator('.box[data-field="amount"]').waitFor({ state: 'visible', timeout: 30_000 })
    await selectField(page, 'amount')
    await page.keyboard.press('Enter')
    await page.keyboard.type('99.95')
    await page.keyboard.press('Enter')
    // The line items by keyboard too: a row added, its cells typed in turn (Tab), then approve from the row's button.
    await page.getByRole('button', { name: 'Add row' }).focus()
    await page.keyboard.press('Enter')
    await page.locator('input[data-cell$=".description"]').last().focus()
    for (const text of ['Consulting', '2', '49.5', '99']) {
      await page.keyboard.type(text)
      await page.keyboard.press('Tab')
    }
    expect(await page.getByLabel('amount, row 1', { exact: true }).inputValue()).toBe('99')
    await page.screenshot({ path: path.join(OUT, 'form-a-line-items.png'), fullPage: true })
    await page.keyboard.press('a')
    await page.locator('text=Nothing waits for review.').waitFor({ timeout: 15_000 })
    await page.screenshot({ path: path.join(OUT, 'form-a-empty-queue.png'), fullPage: true })
    const doc = await call(base, 'GET', `/v1/documents/${one.docId}`, { key: s.key })
    expect(doc.body.status).toBe('completed')
    expect(doc.body.events.map((e: { type: string }) => e.type)).toContain('review_approve')
    expect(doc.body.data.amount).toMatchObject({ value: 99.95, confidence: 1 })
    expect(doc.body.data.line_items).toMatchObject([
      {
        description: { value: 'Consulting', confidence: 1 },
        quantity: { value: 2 },
        unit_price: { value: 49.5 },
        amount: { value: 99 },
      },
    ])
    expect((await call(base, 'GET', `/v1/jobs/${one.jobId}`, { key: s.key })).body.status).toBe('completed')
    await context.close()
  }, 240_000)

  it('DESIGN review.hold "document", split job: one child parked in the desk, the other delivered; the job reads partial, then completed after a keyboard approval', async () => {
    const base = ctx.stack.baseUrl
    const { key } = await newWorkspace(base, 'B', { credits: 20 })
    await call(base, 'POST', '/v1/webhooks', { key, json: { name: 'all', url: `${ctx.receiver.origin}/desk-split` } })
    const split = purchaseOrderPipeline({
      split: { mode: 'per_page' },
      post_processing: { enabled: false },
      review: { hold: 'document' },
      destination: { name: 'out' },
    })
    const splitPipelineId = await publishPipeline(base, key, 'split', split)
    const bytes = await textPdf([
      ['PURCHASE ORDER', 'PO Number: PO-100', 'Buyer: Contoso Ltd'],
      ['PURCHASE ORDER', 'Buyer: Fabrikam Inc', 'Delivery: next week'],
    ])
    const r = await call(base, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'pos.pdf', bytes }], { pipeline_id: splitPipelineId }),
    })
    expect(r.status).toBe(202)
    const jobId = r.body[0].job_id as string
    const partial = await pollUntil(
      () => call(base, 'GET', `/v1/jobs/${jobId}`, { key }),
      (x) => x.body.status === 'partial' || x.body.completed_at !== null,
      90_000,
    )
    expect(partial.body.status).toBe('partial')
    const parkedId = partial.body.review.documents[0].id as string
    const statuses = (file: string) =>
      (JSON.parse(readFileSync(path.join(DEST, file), 'utf8')).documents as { status: string }[])
        .map((d) => d.status)
        .sort()
    expect(statuses(`${jobId}.json`)).toEqual(['completed', 'in_review'])

    const { page, context } = await openDesk(key)
    const rows = page.locator('.queue-table tbody tr')
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1)
    expect(await rows.nth(0).textContent()).toContain(parkedId)
    await page.screenshot({ path: path.join(OUT, 'split-partial-queue.png'), fullPage: true })
    await page.keyboard.press('Enter')
    await page.locator('.field-row').first().waitFor({ timeout: 30_000 })
    await selectField(page, 'po_number')
    await page.keyboard.press('Enter')
    await page.keyboard.type('PO-200')
    await page.keyboard.press('Enter')
    await page.screenshot({ path: path.join(OUT, 'split-partial-document.png'), fullPage: true })
    await page.keyboard.press('a')
    await page.locator('text=Nothing waits for review.').waitFor({ timeout: 15_000 })
    await context.close()

    const done = await pollUntil(
      () => call(base, 'GET', `/v1/jobs/${jobId}`, { key }),
      (x) => x.body.completed_at !== null,
      60_000,
    )
    expect(done.body.status).toBe('completed')
    expect(statuses(`${jobId}.json`)).toEqual(['completed', 'completed'])
    const approved = await call(base, 'GET', `/v1/documents/${parkedId}`, { key })
    expect(approved.body.data.po_number).toMatchObject({ value: 'PO-200', confidence: 1 })
    await pollUntil(
      async () => events('/desk-split', jobId),
      (e) => e.some((x) => x.event === 'job.completed'),
      30_000,
    )
    expect(events('/desk-split', jobId).filter((e) => e.event === 'job.completed')).toHaveLength(1)
  }, 240_000)

  it("sign-in refuses a wrong key and keys without documents:read or documents:review with the API's errors; another workspace's document is refused", async () => {
    const base = ctx.stack.baseUrl
    const urls: string[] = []
    const tryKey = async (key: string) => {
      const context = await browser.newContext()
      const page = await context.newPage()
      page.on('request', (r) => urls.push(r.url()))
      await page.goto(`${base}/review`)
      await page.locator('#api-key').waitFor()
      await page.keyboard.type(key)
      await page.keyboard.press('Enter')
      const alert = page.locator('#sign-in-error')
      await alert.waitFor({ timeout: 10_000 })
      const text = (await alert.textContent()) ?? ''
      const stored = await page.evaluate(() => sessionStorage.getItem('quire.desk.key'))
      await page.screenshot({ path: path.join(OUT, `sign-in-refused-${urls.length}.png`) })
      await context.close()
      return { text, stored }
    }
    const wrong = await tryKey('qk_not_a_key_at_all')
    expect(wrong.text).toContain('unauthorized')
    expect(wrong.stored).toBeNull()
    const readOnly = await newWorkspace(base, 'B', { scopes: ['documents:read'] })
    const noReview = await tryKey(readOnly.key)
    expect(noReview.text).toContain('insufficient_scope')
    const reviewOnly = await newWorkspace(base, 'B', { scopes: ['documents:review'] })
    expect((await tryKey(reviewOnly.key)).text).toContain('insufficient_scope')
    for (const k of [readOnly.key, reviewOnly.key]) expect(urls.some((u) => u.includes(k))).toBe(false)

    // The operator's way in: the admin token and a workspace id; the desk issues a key for that workspace.
    const operator = await browser.newContext()
    const op = await operator.newPage()
    op.on('request', (r) => urls.push(r.url()))
    await op.goto(`${base}/review`)
    await op.getByLabel('the admin token and a workspace').check()
    await op.locator('#admin-token').fill('not-the-token')
    await op.locator('#workspace-id').fill(readOnly.workspaceId)
    await op.keyboard.press('Enter')
    await op.locator('#sign-in-error').waitFor({ timeout: 10_000 })
    expect(await op.locator('#sign-in-error').textContent()).toMatch(/unauthorized/i)
    await op.locator('#admin-token').fill(ADMIN_TOKEN)
    await op.keyboard.press('Enter')
    await op.locator('text=Nothing waits for review.').waitFor({ timeout: 15_000 })
    const issued = await op.evaluate(() => sessionStorage.getItem('quire.desk.key'))
    expect(issued).toBeTruthy()
    expect(urls.some((u) => u.includes(ADMIN_TOKEN) || u.includes(issued!))).toBe(false)
    await operator.close()

    // Signed in to one workspace, another's document is not there (404), in the browser as through the API.
    const owner = await setup('B', '/desk-owner')
    const theirs = await submitParked(owner.key, owner.pipelineId, 'B')
    const mine = await newWorkspace(base, 'B')
    const { page, context } = await openDesk(mine.key)
    await page.locator('text=Nothing waits for review.').waitFor({ timeout: 15_000 })
    const statuses = await page.evaluate(async (id) => {
      const headers = { 'X-API-Key': sessionStorage.getItem('quire.desk.key') ?? '' }
      const doc = await fetch(`/v1/documents/${id}`, { headers })
      const img = await fetch(`/v1/documents/${id}/pages/1`, { headers })
      return [doc.status, img.status, ((await doc.json()) as { error: unknown }).error]
    }, theirs.docId)
    expect(statuses.slice(0, 2)).toEqual([404, 404])
    expect(JSON.stringify(statuses[2])).toMatch(/not_found/i)
    await context.close()
  }, 240_000)
})
