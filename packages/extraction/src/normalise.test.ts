import { describe, expect, it } from 'vitest'
import { findDates, inferCurrency, inferDateOrder, normaliseAmount, normaliseCurrency, normaliseDate } from './index.ts'

describe('normaliseDate', () => {
  it.each([
    ['2024-03-05', '2024-03-05'],
    ['2024/03/05', '2024-03-05'],
    ['05/03/2024', '2024-03-05'],
    ['13/03/2024', '2024-03-13'],
    ['03/13/2024', '2024-03-13'],
    ['05.03.2024', '2024-03-05'],
    ['5.3.24', '2024-03-05'],
    ['5 March 2024', '2024-03-05'],
    ['5th of March, 2024', '2024-03-05'],
    ['March 5, 2024', '2024-03-05'],
    ['Mar 5 2024', '2024-03-05'],
    ['05-Mar-24', '2024-03-05'],
    ['5. März 2024', '2024-03-05'],
    ['le 5 mars 2024', '2024-03-05'],
    ['5 de marzo de 2024', '2024-03-05'],
  ])('%s → %s', (raw, iso) => {
    expect(normaliseDate(raw)).toBe(iso)
  })

  it('resolves day/month ambiguity by the given order, day first by default, and marks it', () => {
    expect(normaliseDate('03/05/2024')).toBe('2024-05-03')
    expect(normaliseDate('03/05/2024', { order: 'MDY' })).toBe('2024-03-05')
    const [ambiguous] = findDates('03/05/2024')
    const [clear] = findDates('13/05/2024')
    expect(ambiguous!.ambiguous).toBe(true)
    expect(ambiguous!.quality).toBeLessThan(clear!.quality)
  })

  it('infers the order from the document’s unambiguous dates', () => {
    expect(inferDateOrder('Date 03/05/2024, due 03/20/2024')).toBe('MDY')
    expect(inferDateOrder('Date 03/05/2024, due 20/03/2024')).toBe('DMY')
    expect(inferDateOrder('Date 03/05/2024')).toBeNull()
  })

  it('rejects impossible dates and non-dates', () => {
    expect(normaliseDate('31/02/2024')).toBeNull()
    expect(normaliseDate('INV-2024-0042')).toBeNull()
    expect(normaliseDate('1,234.56')).toBeNull()
  })
})

describe('normaliseAmount', () => {
  it.each([
    ['1,234.56', 1234.56],
    ['1.234,56', 1234.56],
    ['1 234,56', 1234.56],
    ["1'234.56", 1234.56],
    ['$1,234.56', 1234.56],
    ['EUR 99.50', 99.5],
    ['99,50 €', 99.5],
    ['£ 40', 40],
    ['1.234.567,89', 1234567.89],
    ['12,000', 12000],
    ['(120.00)', -120],
    ['-5.00', -5],
    ['USD1,000', 1000],
  ])('%s → %s', (raw, value) => {
    expect(normaliseAmount(raw)).toBe(value)
  })

  it('ignores percentages, dates, times and identifiers', () => {
    expect(normaliseAmount('20%')).toBeNull()
    expect(normaliseAmount('05/03/2024')).toBeNull()
    expect(normaliseAmount('10:30')).toBeNull()
    expect(normaliseAmount('INV-2024')).toBeNull()
  })
})

describe('normaliseCurrency', () => {
  it.each([
    ['EUR', 'EUR'],
    ['€', 'EUR'],
    ['$', 'USD'],
    ['US$', 'USD'],
    ['A$', 'AUD'],
    ['C$', 'CAD'],
    ['£', 'GBP'],
    ['¥', 'JPY'],
    ['₹', 'INR'],
    ['euros', 'EUR'],
    ['US Dollars', 'USD'],
    ['Canadian dollars', 'CAD'],
    ['pounds sterling', 'GBP'],
    ['Swiss francs', 'CHF'],
    ['chf', 'CHF'],
    ['zł', 'PLN'],
  ])('%s → %s', (raw, code) => {
    expect(normaliseCurrency(raw)).toBe(code)
  })

  it('returns null for what is not a currency', () => {
    expect(normaliseCurrency('VAT')).toBeNull()
    expect(normaliseCurrency('hello')).toBeNull()
  })

  it('infers the document currency from every mention, next-to-amount ones counting most', () => {
    expect(inferCurrency('Total: 10.00 EUR\nShipping 2,00 €')).toMatchObject({ code: 'EUR' })
    expect(inferCurrency('Price $5.00, tax $0.40')).toMatchObject({ code: 'USD' })
    expect(inferCurrency('no money here')).toBeNull()
  })
})

describe('two-digit years take their century from the document', () => {
  it('reads them beside the document’s four-digit years, else with the 00–69 / 70–99 pivot', () => {
    expect(findDates('Invoice date 03/04/69')[0]?.value).toBe('2069-04-03')
    expect(findDates('Invoice date 03/04/69   Delivered 1969-04-01')[0]?.value).toBe('1969-04-03')
    expect(findDates('Date 12.03.99  Due 2099-04-11')[0]?.value).toBe('2099-03-12')
    expect(findDates('Date 12.03.99')[0]?.value).toBe('1999-03-12')
    expect(findDates('Date 5-Mar-25, paid 10 March 2025')[0]?.value).toBe('2025-03-05')
  })
})
