import { describe, expect, it } from 'vitest'
import { extractInvoice, inferCurrency } from './index.ts'

describe('extractInvoice: conventions of other languages and of till slips', () => {
  it('reads labels of several columns in a header row without joining them across the gap', () => {
    const f = extractInvoice(
      'Fattura n.   Data   Scadenza\n100106   09/03/25   08/04/25\nTotale documento   € 1.220,00',
    )
    expect(f.invoice_number.value).toBe('100106')
    expect(f.date.value).toBe('2025-03-09')
    expect(f.due_date.value).toBe('2025-04-08')
    expect(f.amount.value).toBe(1220)
  })

  it('matches labels and month names whose accents OCR dropped', () => {
    const f = extractInvoice(
      'Rechnungs-Nr. RE-4411\nDatum: 28. Marz 2024\nSous-total 100,00 €\nTVA 20 % 20,00 €\nNet a payer: 120,00 €',
    )
    expect(f.invoice_number.value).toBe('RE-4411')
    expect(f.date.value).toBe('2024-03-28')
    expect(f.amount.value).toBe(120)
    expect(f.amount_untaxed.value).toBe(100)
  })

  it('takes a booking reference as the number when there is no invoice number', () => {
    const f = extractInvoice('Booking Confirmation\nBooking Reference: BK483920\nDate: 2024-06-01\nTotal: USD 410.00')
    expect(f.invoice_number.value).toBe('BK483920')
    expect(f.invoice_number.confidence).toBeLessThan(0.85)
  })

  it('takes an order number, in English or French, as the number when there is no invoice number', () => {
    expect(extractInvoice('Order Confirmation\nOrder Number: 40-77812\nTotal: USD 12.00').invoice_number.value).toBe(
      '40-77812',
    )
    expect(extractInvoice('Confirmation\nN° de commande : CMD-20931\nTotal TTC 48,00 €').invoice_number.value).toBe(
      'CMD-20931',
    )
  })

  it('reads the total paid on a till slip: after cash rounding, not the cash tendered or the change', () => {
    const slip = [
      'MAJU MART SDN BHD',
      '50450 Kuala Lumpur',
      '12/03/2024 14:22',
      'NOODLES   12.40',
      'SUBTOTAL   12.40',
      'SST 6%   0.74',
      'TOTAL   RM13.14',
      'Rounding Adj   0.01',
      'TOTAL ROUNDED   RM13.15',
      'CASH   20.00',
      'CHANGE   6.85',
    ].join('\n')
    const f = extractInvoice(slip)
    expect(f.amount.value).toBe(13.15)
    expect(f.currency.value).toBe('MYR')
    expect(f.date.value).toBe('2024-03-12')
  })

  it('keeps the sign of a negative cash rounding', () => {
    const f = extractInvoice(
      [
        'SUBTOTAL   114.17',
        'SST 6%   6.85',
        'TOTAL   RM121.02',
        'Rounding Adj   -0.02',
        'TOTAL ROUNDED   RM121.00',
      ].join('\n'),
    )
    expect(f.amount.value).toBe(121)
  })

  it('takes "Balance" under the cash tendered as the change, and finds the total paid as tendered − change', () => {
    const f = extractInvoice(
      [
        'UDUPI CAFE',
        'Pune 411001',
        '01/11/2022 13:22',
        'BREAD   17.62',
        'Sub Total   26.08',
        'NET AMOUNT   Rs.26.08',
        'CGST 2.5% + SGST 2.5%   1.24',
        'Cash   40.00',
        'Balance   13.92',
      ].join('\n'),
    )
    expect(f.amount.value).toBe(26.08)
    expect(f.currency.value).toBe('INR')
  })

  it('finds the total paid where it is written when the total line is unreadable, never the cash tendered', () => {
    const slip = [
      'BOULANGERIE DUPONT',
      '69002 Lyon',
      '10/09/2022 08:28',
      '3 x APPLES   32,01',
      'TOTAL   113-55 €',
      'ESPECES   130,00',
      'RENDU   16,45',
      'TVA%   Net   Tax   Gross',
      // The tax as OCR misread it (10,32): net + tax no longer make the total.
      'A 10%   103,23   18,32   113,55',
    ]
    expect(extractInvoice(slip.join('\n')).amount.value).toBe(113.55)
    // Without the change line nothing says what was paid: still not the 130,00 tendered.
    expect(extractInvoice(slip.filter((l) => !l.startsWith('RENDU')).join('\n')).amount.value).not.toBe(130)
  })

  it('knows local currency marks and, failing those, the issuer country', () => {
    expect(extractInvoice('Bill No. 77\nGrand Total Rs. 1,180.00').currency.value).toBe('INR')
    expect(extractInvoice('SUMA PLN 34,91').currency.value).toBe('PLN')
    expect(extractInvoice('TOTAL 12.40 zł').currency.value).toBe('PLN')
    expect(inferCurrency('BOULANGERIE DUPONT\n14 rue Victor Hugo\n69002 Lyon\nTOTAL 12,40')?.code).toBe('EUR')
    expect(inferCurrency('Shop 4, MG Road\nPune 411001\nTOTAL 120.00')?.code).toBe('INR')
    expect(inferCurrency('TOTAL 120.00')).toBeNull()
  })
})
