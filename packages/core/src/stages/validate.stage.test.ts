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
})
