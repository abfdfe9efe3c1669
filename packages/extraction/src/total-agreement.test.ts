import { describe, expect, it } from 'vitest'
import { extractInvoice } from './index.ts'
import { ocrVariants } from './ocr-confusions.ts'

// Issue 37 (DESIGN "Extraction"): totals and dates chosen by checks, not by the first or last label; OCR-confusion
// candidates accepted only when a check confirms them; confidence that falls when the document disagrees.
describe('the total chosen by agreement', () => {
  it('takes the total that tendered − change and the subtotal plus tax confirm over a tax summary "Total"', () => {
    const f = extractInvoice(
      [
        'CORNER HARDWARE',
        'Total Sales (Excluding Tax)     50.00',
        'Tax 6%                           3.00',
        'Total Sales (Inclusive of Tax) : 53.00',
        'CASH                            60.00',
        'Change                           7.00',
        'TAX SUMMARY       Amount    Tax',
        'SR 6%             50.00     3.00',
        'Total             50.00     3.00',
      ].join('\n'),
    )
    expect(f.amount.value).toBe(53)
    expect(f.amount.confidence).toBeGreaterThanOrEqual(0.9)
  })

  it('never takes a "tax included in total" line or a line of quantities for the total', () => {
    const f = extractInvoice(
      [
        'Total Qty: 3                     12.40',
        'Total Incl. Tax                RM 12.40',
        'CARD                           RM 12.40',
        'Tax @6% included in total      RM 0.70',
      ].join('\n'),
    )
    expect(f.amount.value).toBe(12.4)
  })

  it('pays the rounded total: total plus the rounding line, a multiple of 5 cents, stated again by the payment', () => {
    const f = extractInvoice(
      [
        'Sub-total                      31.87',
        'Total Sales Incl Tax           31.87',
        'Rounding Adj                    0.03',
        'Total After Adj Incl Tax       31.90',
        'CASH                           50.00',
        'Item Count 4      Change Amt   18.10',
      ].join('\n'),
    )
    expect(f.amount.value).toBe(31.9)
  })

  it('reads a misread total again only when a check confirms it (E for 3, 0.00 kept when nothing confirms 0.08)', () => {
    const misread = extractInvoice(
      [
        'Total Incl. Tax          RM E7.10',
        'CASH                     RM 50.00',
        'CHANGE                   RM 12.90',
      ].join('\n'),
    )
    expect(misread.amount.value).toBe(37.1)
    const clean = extractInvoice(
      ['Net amount      EUR 99.50', 'Tax             EUR 0.00', 'Balance Due     EUR 99.50'].join('\n'),
    )
    expect(clean.amount.value).toBe(99.5)
  })

  it('lowers the confidence of a labelled total that the document’s arithmetic contradicts', () => {
    const f = extractInvoice(
      ['TOTAL                11.00', 'Cash Received       101.00', 'Change               30.00'].join('\n'),
    )
    expect(f.amount.value).toBe(71)
    expect(f.amount.confidence).toBeLessThan(0.9)
  })
})

describe('the date chosen by agreement', () => {
  it('takes the date a slip prints twice over a misread one printed once', () => {
    const f = extractInvoice(
      ['21/06/18 10:08', 'Nasi Lemak   1   6.50', 'Total   6.50', '27/06/18 09:49 - 27/06/18 10:08'].join('\n'),
    )
    expect(f.date.value).toBe('2018-06-27')
  })

  it('keeps a strongly labelled invoice date over a repeated print date', () => {
    const f = extractInvoice(
      ['Invoice Date: 05/03/2024', 'Printed 09/03/2024', 'Total 10.00', 'Printed 09/03/2024'].join('\n'),
    )
    expect(f.date.value).toBe('2024-03-05')
  })

  it('never takes a delivery, period, print or order date for the invoice date (words per language as data)', () => {
    const date = (text: string): unknown => extractInvoice(text).date.value
    expect(date('Lieferdatum: 01.11.2020\nRechnung Nr. RE-1 vom 05.11.2020\nGesamt 10,00 €')).toBe('2020-11-05')
    expect(date('Druckdatum 30.11.2020 Seite 1/1\nRechnung RE-1\n05.11.2020\nGesamt 10,00 €')).toBe('2020-11-05')
    expect(date('Période du 01/10/2020 au 31/10/2020\nFacture F-1 du 05/11/2020\nTotal TTC 10,00 €')).toBe('2020-11-05')
    expect(date('Printed on 30/11/2020\nInvoice INV-1\n05/11/2020\nTotal 10.00')).toBe('2020-11-05')
    expect(date('Order Time : 18:07:35   Date :11/04/18\nTotal 10.00')).toBe('2018-04-11')
    expect(date('Order date: 01/11/2020\nInvoice INV-1\nTotal 10.00')).toBeNull()
  })

  it('reads a month name touching its year and a date run together', () => {
    expect(extractInvoice('Date: 18 Apr2018\nTotal 5.00').date.value).toBe('2018-04-18')
    expect(extractInvoice('Date 30032018\nTotal 5.00').date.value).toBe('2018-03-30')
  })
})

describe('ocrVariants', () => {
  it('reads look-alike letters as digits, restores a lost decimal point and swaps confused digits', () => {
    const values = (s: string): number[] => ocrVariants(s).map((v) => v.value)
    expect(values('E7.10')).toContain(37.1)
    expect(values('1378')).toContain(13.78)
    expect(values('633595')).toContain(63.35)
    expect(values('11.00')).toContain(71)
    expect(values('-.02')).toContain(0.02)
    expect(values('TOTAL')).toEqual([])
  })
})
