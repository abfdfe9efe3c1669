import { describe, expect, it } from 'vitest'
import { confidenceBand, fieldKind, parseInput } from './field-value.ts'

// DESIGN (Extraction): values are normalised, dates `YYYY-MM-DD`, amounts JSON numbers, currencies ISO 4217 codes;
// the desk edits each by that type and sends corrections in the same shapes.
describe('desk field editing', () => {
  it('tells a field kind from its name and value', () => {
    expect(fieldKind('amount', { value: 12, confidence: 1 })).toBe('amount')
    expect(fieldKind('tax', { value: null, confidence: 0 })).toBe('amount')
    expect(fieldKind('due_date', { value: null, confidence: 0 })).toBe('date')
    expect(fieldKind('shipped', { value: '2026-01-02', confidence: 1 })).toBe('date')
    expect(fieldKind('currency', { value: 'EUR', confidence: 1 })).toBe('currency')
    expect(fieldKind('issuer', { value: 'Northwind', confidence: 1 })).toBe('text')
  })
  it('sends amounts as numbers, currencies as upper-case codes, dates as YYYY-MM-DD, empty as null', () => {
    expect(parseInput('amount', '1250.50')).toEqual({ ok: true, value: 1250.5 })
    expect(parseInput('amount', '12,5').ok).toBe(false)
    expect(parseInput('currency', 'eur')).toEqual({ ok: true, value: 'EUR' })
    expect(parseInput('currency', 'EURO').ok).toBe(false)
    expect(parseInput('date', '2026-03-05')).toEqual({ ok: true, value: '2026-03-05' })
    expect(parseInput('date', '05/03/2026').ok).toBe(false)
    expect(parseInput('text', '  ')).toEqual({ ok: true, value: null })
  })
  it('colours by confidence band', () => {
    expect([0.95, 0.7, 0.2].map(confidenceBand)).toEqual(['high', 'medium', 'low'])
  })
})
