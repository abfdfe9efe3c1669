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

  describe('line_items (DESIGN, Extraction: "a reviewer\'s `data` may replace the whole array")', () => {
    const rows = [
      { description: '  Support plan ', quantity: '2', unit_price: { value: '1.234,50' }, amount: 2469 },
      { description: 'Cables', quantity: 1, unit_price: null, amount: { value: 12.5, confidence: 0.2 } },
    ]
    const unwrapped = rows.map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k, v && typeof v === 'object' ? (v as { value: unknown }).value : v]),
      ),
    ) as Array<Record<string, string | number | null>>

    it('replaces the whole table: cells normalised (numbers for quantity, unit_price, amount), each at confidence 1', () => {
      expect(correctedValues('invoice', PipelineDefinition.parse({}), { line_items: unwrapped })).toEqual({
        line_items: [
          {
            description: { value: '  Support plan ', confidence: 1 },
            quantity: { value: 2, confidence: 1 },
            unit_price: { value: 1234.5, confidence: 1 },
            amount: { value: 2469, confidence: 1 },
          },
          {
            description: { value: 'Cables', confidence: 1 },
            quantity: { value: 1, confidence: 1 },
            unit_price: { value: null, confidence: 0 },
            amount: { value: 12.5, confidence: 1 },
          },
        ],
      })
    })

    it('reads null as an empty table, and refuses a bad shape with INVALID_PARAMETER', () => {
      const invoice = PipelineDefinition.parse({})
      expect(correctedValues('invoice', invoice, { line_items: null })).toEqual({ line_items: [] })
      const refused = (value: unknown) => () =>
        correctedValues('invoice', invoice, { line_items: value as Array<Record<string, string>> })
      expect(refused('3 rows')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER' }))
      expect(refused([['Cables', 1]])).toThrow(/data\.line_items\[0\]: a row is an object/)
      expect(refused([{ description: 'Cables', price: 3 }])).toThrow(/unknown cell price/)
      expect(refused([{ description: 'Cables', amount: 'twelve' }])).toThrow(/line_items\[0\]\.amount/)
      expect(refused([{}])).toThrow(/a row needs at least one cell/)
      // A single-valued field takes no list.
      expect(() => correctedValues('invoice', invoice, { amount: [{ amount: 1 }] })).toThrow(/takes one value/)
    })
  })
})
