import { describe, expect, it } from 'vitest'
import { checkDateYear } from './date-years.ts'
import { extractInvoice } from './extract-invoice.ts'
import type { Candidate } from './field-candidates.ts'
import type { FoundDate } from './normalise-date.ts'

// Issue 37, "Totals and dates chosen by checks": a year far from the document's other dates is rejected.
const candidate = (value: string, confidence = 0.9): Candidate => ({
  value,
  confidence,
  index: 0,
  currency: null,
  hit: null,
})
const found = (value: string, index: number): FoundDate => ({ value, index, length: 10, quality: 1, ambiguous: false })
const now = new Date('2026-11-29T00:00:00Z')

describe('checkDateYear: the year of the chosen date against the rest of the document', () => {
  it('takes the year two other dates agree on when the read year is one confusable digit from it', () => {
    const others = [found('2018-03-14', 40), found('2018-04-13', 80)]
    expect(checkDateYear(candidate('2016-03-14'), others, now)).toMatchObject({ value: '2018-03-14', confidence: 0.6 })
  })

  it('doubts a far year it cannot correct, and a date more than a year after today', () => {
    expect(checkDateYear(candidate('2011-03-14'), [found('2018-04-13', 80)], now)?.confidence).toBe(0.45)
    // One other date cannot say which of the two is misread: doubted, not changed.
    expect(checkDateYear(candidate('2016-03-14'), [found('2018-04-13', 80)], now)).toMatchObject({
      value: '2016-03-14',
      confidence: 0.45,
    })
    expect(checkDateYear(candidate('2031-01-02'), [], now)?.confidence).toBe(0.45)
  })

  it('leaves dates alone that sit within a year of the others (an invoice at the turn of the year)', () => {
    const date = candidate('2024-12-30')
    expect(checkDateYear(date, [found('2025-01-29', 40)], now)).toBe(date)
    expect(checkDateYear(date, [], now)).toBe(date)
    // Other dates that disagree among themselves say nothing.
    expect(checkDateYear(date, [found('2019-01-01', 40), found('2022-01-01', 60)], now)).toBe(date)
  })

  it('corrects a misread year in a whole receipt', () => {
    const text = [
      'KEDAI RUNCIT MAJU',
      'Date: 14/03/2016 10:22',
      'Bread 2.50',
      'Total 2.50',
      'Promotion valid 01/03/2018 - 31/03/2018',
    ].join('\n')
    expect(extractInvoice(text).date).toMatchObject({ value: '2018-03-14' })
  })
})
