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

  it('knows local currency marks and, failing those, the issuer country', () => {
    expect(extractInvoice('Bill No. 77\nGrand Total Rs. 1,180.00').currency.value).toBe('INR')
    expect(extractInvoice('SUMA PLN 34,91').currency.value).toBe('PLN')
    expect(extractInvoice('TOTAL 12.40 zł').currency.value).toBe('PLN')
    expect(inferCurrency('BOULANGERIE DUPONT\n14 rue Victor Hugo\n69002 Lyon\nTOTAL 12,40')?.code).toBe('EUR')
    expect(inferCurrency('Shop 4, MG Road\nPune 411001\nTOTAL 120.00')?.code).toBe('INR')
    expect(inferCurrency('TOTAL 120.00')).toBeNull()
  })
})
