import { PipelineDefinition } from '@quire/domain'
import { describe, expect, it } from 'vitest'
import { correctedValues } from './corrected-values.ts'

const definition = PipelineDefinition.parse({
  schemas: {
    po: {
      fields: [
        { name: 'po_number', required: true },
        { name: 'total', type: 'amount' },
        { name: 'ordered', type: 'date' },
        { name: 'currency', type: 'currency' },
      ],
    },
  },
})

describe('a reviewer\'s corrections (DESIGN: "corrected data is re-validated"; Extraction: normalised values)', () => {
  it('normalises values like extraction does and gives them confidence 1', () => {
    expect(
      correctedValues('po', definition, { po_number: 42, total: '1,234.50', ordered: '2026-03-04', currency: 'EUR' }),
    ).toEqual({
      po_number: { value: '42', confidence: 1 },
      total: { value: 1234.5, confidence: 1 },
      ordered: { value: '2026-03-04', confidence: 1 },
      currency: { value: 'EUR', confidence: 1 },
    })
  })

  it('reads a written value exactly as extraction reads it: "(12.50)" is a credit of -12.5, "5 March 2026" a date', () => {
    expect(correctedValues('po', definition, { total: '(12.50)', ordered: '5 March 2026' })).toEqual({
      total: { value: -12.5, confidence: 1 },
      ordered: { value: '2026-03-05', confidence: 1 },
    })
  })

  it('reads a field corrected to null as not found: {value: null, confidence: 0}', () => {
    expect(correctedValues('po', definition, { po_number: null })).toEqual({
      po_number: { value: null, confidence: 0 },
    })
  })

  it('refuses a field the schema does not have, and a value its type cannot hold', () => {
    expect(() => correctedValues('po', definition, { nosuch: 'x' })).toThrow(/nosuch: not a field of schema po/)
    expect(() => correctedValues('po', definition, { total: 'lots' })).toThrow(/total: "lots" is not a valid amount/)
    expect(() => correctedValues('po', definition, { ordered: 20260304 })).toThrow(/not a valid date/)
    expect(() => correctedValues('invoice', definition, { buyer: 'x' })).toThrow(/not a field of schema invoice/)
  })

  it('takes any field name for generic, which has no fixed fields', () => {
    expect(correctedValues('generic', definition, { anything: 'x' })).toEqual({
      anything: { value: 'x', confidence: 1 },
    })
  })
})
