// A reviewer's correction of an item table on real PostgreSQL, after the real stages extracted it from a real PDF.
// DESIGN, Extraction: "`invoice` also has `line_items` ... a reviewer's `data` may replace the whole array".
import { openStoreFixture } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { submitTestJob } from '../jobs/submit-job.test-helper.ts'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { runStages } from '../stages/run-stage.ts'
import type { StageDeps } from '../stages/stage-context.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { reviewDocument } from './review-document.ts'

const ITEM_INVOICE = [
  'Northwind Traders Ltd',
  'INVOICE',
  'Invoice Number: INV-2026-0077',
  'Invoice Date: 2026-03-05',
  'Description   Qty   Unit Price   Amount',
  'Consulting hours   12   150.00   1,800.00',
  'Hosting (monthly)   1   49.90   49.90',
  'Subtotal: 1,849.90 EUR',
  'VAT (20%): 369.98 EUR',
  'Total Due: 2,219.88 EUR',
]

// The OCR engine starts on first use only: these text PDFs never need it.
const fixture = await openStoreFixture({ name: 'review-items', prepare: ensurePlatformPipelines, ocr: true })
const { db, dir, blobs, ocr } = fixture
const deps: StageDeps = { db, blobs, ocr }
afterAll(fixture.close)

/** A text-PDF invoice run through every stage with the built-in invoice schema, then parked as validate parks one. */
async function parkedInvoice() {
  const ws = await createWorkspace({ db, name: 'review line items', apiForm: 'A', credits: 100 })
  const { jobId } = await submitTestJob({
    db,
    blobs,
    dir,
    workspaceId: ws.id,
    pages: [ITEM_INVOICE],
    options: { schemaId: 'invoice' },
  })
  await runStages(deps, { jobId, stage: 'initialization', serves: () => true })
  const doc = await db.document.findFirstOrThrow({ where: { jobId, parentId: null } })
  // The state a low-confidence document is left in after validate (Form A: the job completes beside it).
  await db.document.update({ where: { id: doc.id }, data: { status: 'in_review' } })
  return { workspaceId: ws.id, documentId: doc.id }
}

const rowsOf = async (id: string) =>
  ((await db.document.findUniqueOrThrow({ where: { id } })).data as { line_items: unknown[] }).line_items

describe('review corrections of line_items on real PostgreSQL', () => {
  it('the extract stage stored the item rows as the document data', async () => {
    const { documentId } = await parkedInvoice()
    const rows = (await rowsOf(documentId)) as Array<Record<string, { value: unknown }>>
    expect(rows.map((r) => [r.description?.value, r.quantity?.value, r.unit_price?.value, r.amount?.value])).toEqual([
      ['Consulting hours', 12, 150, 1800],
      ['Hosting (monthly)', 1, 49.9, 49.9],
    ])
  })

  it('approve with data.line_items replaces the whole table, normalised, every cell at confidence 1; the other fields stay', async () => {
    const { workspaceId, documentId } = await parkedInvoice()
    const before = (await db.document.findUniqueOrThrow({ where: { id: documentId } })).data as Record<string, unknown>
    await reviewDocument({
      db,
      workspaceId,
      documentId,
      action: 'approve',
      corrections: {
        line_items: [
          { description: 'Consulting hours (March)', quantity: '12', unit_price: '150', amount: '1,800.00' },
        ],
      },
    })
    const after = await db.document.findUniqueOrThrow({ where: { id: documentId } })
    expect(after.status).toBe('completed')
    const data = after.data as Record<string, unknown>
    expect(data.line_items).toEqual([
      {
        description: { value: 'Consulting hours (March)', confidence: 1 },
        quantity: { value: 12, confidence: 1 },
        unit_price: { value: 150, confidence: 1 },
        amount: { value: 1800, confidence: 1 },
      },
    ])
    expect(data.invoice_number).toEqual(before.invoice_number)
    const events = await db.documentEvent.findMany({ where: { documentId, type: 'review_approve' } })
    expect(events[0]?.data).toMatchObject({ corrected: ['line_items'] })
  })

  it('a table of a bad shape is refused with INVALID_PARAMETER and nothing changes', async () => {
    const { workspaceId, documentId } = await parkedInvoice()
    const before = await db.document.findUniqueOrThrow({ where: { id: documentId } })
    await expect(
      reviewDocument({
        db,
        workspaceId,
        documentId,
        action: 'approve',
        corrections: { line_items: [{ description: 'Cables', amount: 'lots' }] },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_PARAMETER' })
    expect(await db.document.findUniqueOrThrow({ where: { id: documentId } })).toEqual(before)
  })
})
