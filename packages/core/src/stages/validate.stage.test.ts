// DESIGN, Processing lifecycle: "a document below `review.min_confidence` or missing a required field is parked
// `in_review` after validate"; Extraction: "a field not found reads `{value: null, confidence: 0}`".
import { PipelineDefinition } from '@quire/domain'
import { INVOICE_FIELDS } from '@quire/extraction'
import { describe, expect, it } from 'vitest'
import { reviewProblems } from './validate.stage.ts'

const withBar = (min_confidence: number) => PipelineDefinition.parse({ review: { min_confidence } })
const invoice = (found: Record<string, number>) => ({
  schemaId: 'invoice',
  data: Object.fromEntries(
    INVOICE_FIELDS.map((name) =>
      name in found ? [name, { value: 'x', confidence: found[name] }] : [name, { value: null, confidence: 0 }],
    ),
  ),
})

describe('reviewProblems: why validate parks a document', () => {
  it('a found value below the bar parks it; values at or above it do not', () => {
    const [first, second] = INVOICE_FIELDS
    expect(reviewProblems(invoice({ [first!]: 0.95, [second!]: 0.5 }), withBar(0.9))).toEqual([
      `${second}: confidence 0.5 below 0.9`,
    ])
    expect(reviewProblems(invoice({ [first!]: 0.95 }), withBar(0.9))).toEqual([])
  })

  it('a document with no field of its schema found is below any bar above 0, not under the default bar of 0', () => {
    expect(reviewProblems(invoice({}), withBar(0.99))).toEqual(['no field of invoice found: confidence 0 below 0.99'])
    expect(reviewProblems(invoice({}), withBar(0))).toEqual([])
  })

  it('some fields not found, the found ones above the bar: not parked (an invoice need not carry every field)', () => {
    expect(reviewProblems(invoice({ [INVOICE_FIELDS[0]!]: 0.99 }), withBar(0.5))).toEqual([])
  })

  describe('line_items (an item table; its confidence counts only when the schema requires it)', () => {
    const row = (confidence: number) => ({
      description: { value: 'Cables', confidence },
      quantity: { value: 2, confidence },
      unit_price: { value: 5, confidence },
      amount: { value: 10, confidence },
    })
    const requiring = (min_confidence: number) =>
      PipelineDefinition.parse({
        review: { min_confidence },
        schemas: {
          inv: {
            fields: [
              { name: 'total', type: 'amount' },
              { name: 'line_items', type: 'line_items', required: true },
            ],
          },
        },
      })

    it('a low cell does not park a built-in invoice (line_items not required); a table with rows counts as found', () => {
      const doc = { schemaId: 'invoice', data: { ...invoice({}).data, line_items: [row(0.3)] } }
      expect(reviewProblems(doc, withBar(0.9))).toEqual([])
    })

    it('a required table parks the document when empty or when a found cell is below the bar', () => {
      const total = { value: 10, confidence: 0.99 }
      expect(reviewProblems({ schemaId: 'inv', data: { total, line_items: [] } }, requiring(0))).toEqual([
        'line_items: required field not found',
      ])
      expect(
        reviewProblems({ schemaId: 'inv', data: { total, line_items: [row(0.99), row(0.5)] } }, requiring(0.9)),
      ).toEqual([
        'line_items[1].description: confidence 0.5 below 0.9',
        'line_items[1].quantity: confidence 0.5 below 0.9',
        'line_items[1].unit_price: confidence 0.5 below 0.9',
        'line_items: 1 more cells below 0.9',
      ])
      expect(reviewProblems({ schemaId: 'inv', data: { total, line_items: [row(0.95)] } }, requiring(0.9))).toEqual([])
    })
  })
})
