// Line items, black box: the real apps as processes, a real text PDF with an item table.
// DESIGN, Extraction: "`invoice` also has `line_items`: an array of `{description, quantity, unit_price, amount}`,
// each cell a field value"; they appear in GET /v1/documents/{id} and in Form B `include=result`.
import { describe, expect, it } from 'vitest'
import { textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()

const ITEM_INVOICE = [
  'Kestrel Supplies Ltd',
  'INVOICE',
  'Invoice Number: INV-2026-0311',
  'Invoice Date: 2026-03-11',
  'Description   Qty   Unit Price   Amount',
  'Printer paper A4   10   4.50   45.00',
  'Toner cartridge   2   89.00   178.00',
  'Subtotal: 223.00 GBP',
  'VAT (20%): 44.60 GBP',
  'Total Due: 267.60 GBP',
]

const cells = (rows: Array<Record<string, { value: unknown }>>) =>
  rows.map((r) => [r.description?.value, r.quantity?.value, r.unit_price?.value, r.amount?.value])

describe('line items', () => {
  it('Form B: an invoice PDF with an item table returns line_items in GET /v1/documents/{id} and in include=result', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'invoices', definition: { routing: { catch_all_schema_id: 'invoice' } } },
    })
    await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'items.pdf', bytes: await textPdf([ITEM_INVOICE]) }], {
        pipeline_id: p.body.id,
      }),
    })
    expect(r.status).toBe(202)
    const jobId = r.body[0].job_id
    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=result`, { key }),
      (x) => x.body.completed_at !== null,
      90_000,
    )
    expect(done.body.status).toBe('completed')
    const [doc] = done.body.result.documents
    const want = [
      ['Printer paper A4', 10, 4.5, 45],
      ['Toner cartridge', 2, 89, 178],
    ]
    expect(cells(doc.data.line_items)).toEqual(want)
    // Each cell is a field value: a confidence in 0..1 and, from a text PDF, the page and box it was read from.
    for (const row of doc.data.line_items)
      for (const cell of Object.values(row) as Array<{ confidence: number; page: number; bbox: number[] }>) {
        expect(cell.confidence).toBeGreaterThan(0)
        expect(cell.confidence).toBeLessThanOrEqual(1)
        expect(cell.page).toBe(1)
        expect(cell.bbox).toHaveLength(4)
      }
    const read = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${doc.id}`, { key })
    expect(read.status).toBe(200)
    expect(cells(read.body.data.line_items)).toEqual(want)
    expect(read.body.data.amount).toMatchObject({ value: 267.6 })
  })

  it('the OpenAPI document names FieldValue and LineItem', async () => {
    const r = await call(ctx.stack.baseUrl, 'GET', '/v1/openapi.json?form=B', {})
    expect(r.status).toBe(200)
    expect(r.body.components.schemas.LineItem.properties).toMatchObject({
      description: { $ref: '#/components/schemas/FieldValue' },
      amount: { $ref: '#/components/schemas/FieldValue' },
    })
  })
})
