import { describe, expect, it } from 'vitest'
import { fuseReadings } from './fuse-readings.ts'

// Issue 37: a second reading of a scan, and confidence that means something (agreement raises it, dispute lowers it).
describe('fuseReadings', () => {
  it('keeps a value both readings found, at least 0.9 sure, with the surer reading’s position', () => {
    const fused = fuseReadings(
      { amount: { value: 12.5, confidence: 0.6, page: 1, bbox: [0, 0, 0.1, 0.1] } },
      { amount: { value: 12.5, confidence: 0.8, page: 1, bbox: [0.5, 0.5, 0.6, 0.6] } },
    )
    expect(fused.amount).toEqual({ value: 12.5, confidence: 0.9, page: 1, bbox: [0.5, 0.5, 0.6, 0.6] })
  })

  it('takes the surer value where the readings differ, less sure than it was', () => {
    const fused = fuseReadings(
      { date: { value: '2018-03-30', confidence: 0.8 } },
      { date: { value: '2018-03-03', confidence: 0.5 } },
    )
    expect(fused.date.value).toBe('2018-03-30')
    expect(fused.date.confidence).toBeCloseTo(0.68)
  })

  it('takes a value only one reading found, and keeps not-found when neither did', () => {
    const fused = fuseReadings(
      { total: { value: null, confidence: 0 }, issuer: { value: null, confidence: 0 } },
      { total: { value: 7, confidence: 0.9 }, issuer: { value: null, confidence: 0 } },
    )
    expect(fused.total).toEqual({ value: 7, confidence: 0.9 * 0.85 })
    expect(fused.issuer).toEqual({ value: null, confidence: 0 })
  })

  it('keeps the primary reading’s table (line items) unless the second one holds together better', () => {
    const rows = [{ description: { value: 'Tea', confidence: 0.9 } }]
    const fused = fuseReadings({ line_items: rows }, { line_items: [] })
    expect(fused.line_items).toBe(rows)

    // The first reading lost a quantity line and a row; the second's rows multiply out and add up to the total.
    const f = (value: unknown) => ({ value, confidence: 0.7 })
    const row = (d: string, q: number | null, u: number | null, a: number) => ({
      description: f(d),
      quantity: f(q),
      unit_price: f(u),
      amount: f(a),
    })
    const first = { amount: f(21.69 + 30.88), line_items: [row('EGGS 10', 2, 15.44, 30.88)] }
    const second = {
      amount: f(21.69 + 30.88),
      line_items: [row('BREAD', 3, 7.23, 21.69), row('EGGS 10', 2, 15.44, 30.88)],
    }
    expect(fuseReadings(first, second).line_items).toBe(second.line_items)
    expect(fuseReadings(second, first).line_items).toBe(second.line_items)
  })
})
