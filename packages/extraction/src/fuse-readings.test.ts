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

  it('keeps the primary reading’s non-field values (line items) as they are', () => {
    const rows = [{ description: { value: 'Tea', confidence: 0.9 } }]
    const fused = fuseReadings({ line_items: rows }, { line_items: [] })
    expect(fused.line_items).toBe(rows)
  })
})
