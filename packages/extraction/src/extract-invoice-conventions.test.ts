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

  it('finds the number under its label in a row of labels whose other cells it does not know', () => {
    const f = extractInvoice(
      ['Factuur', 'Factuurnr.   Afgedrukt op   Datum', 'A-044319   03-03-22   18-03-22', 'Totaal   12,10'].join('\n'),
    )
    expect(f.invoice_number.value).toBe('A-044319')
    // A value on the label's own line, across a gap, is still read there.
    expect(extractInvoice('Invoice No.     RE-20201121/508\nTotal 5.00').invoice_number.value).toBe('RE-20201121/508')
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

  it('reads a number label next to its noun, not across a column gap: "FACTURA   Nº factura   F-26-0042"', () => {
    const f = extractInvoice(
      'Talleres S.L.\nFACTURA   Nº factura   F-26-0042\nFecha   05/03/2026\nTotal factura   1.210,00 €',
    )
    expect(f.invoice_number.value).toBe('F-26-0042')
  })

  it('takes a column header "Numero" with its value in the row below, but not a folio inside a registry note', () => {
    const f = extractInvoice(
      'Conti S.p.A.   FATTURA\n\nNumero   Data   Cod. cliente\n42/A   05/03/2026   HN-007\n\nTotale documento   € 1.220,00\n' +
        'Iscritta al Registro, tomo 1234, folio 56',
    )
    expect(f.invoice_number.value).toBe('42/A')
  })

  it('reads what is left to pay after a deposit as the total due, not the total before it', () => {
    const f = extractInvoice(
      'Invoice No INV-7\nSubtotal   $4,423.44\nTax (0%)   $0.00\nTotal   $4,423.44\n' +
        'Deposit received 02/10/2026   $-1,000.00\nBalance Due   $3,423.44',
    )
    expect(f.amount.value).toBe(3423.44)
    // A paid receipt's balance of nothing leaves the total.
    const paid = extractInvoice('Subtotal $40.00\nTax $10.00\nTotal $50.00\nAmount Paid $50.00\nBalance Due $0.00')
    expect(paid.amount.value).toBe(50)
  })

  it('reads Swiss, Dutch and Belgian net and gross labels (exkl./inkl. MWST, excl. BTW, HTVA/TVAC)', () => {
    const ch = extractInvoice(
      "Rechnung Nr. R-1\nTotal exkl. MWST   CHF 13'932.85\nMWST 8.1%   CHF 1'128.56\nTotal inkl. MWST   CHF 15'061.41",
    )
    expect([ch.amount_untaxed.value, ch.tax.value, ch.amount.value]).toEqual([13932.85, 1128.56, 15061.41])
    const nl = extractInvoice(
      'Factuurnummer F-9\nTotaal excl. BTW   € 1.000,00\nBTW 21%   € 210,00\nTe betalen   € 1.210,00',
    )
    expect(nl.amount_untaxed.value).toBe(1000)
    const be = extractInvoice('Facture N° 12\nTotal HTVA   1.000,00 €\nTVA 21 %   210,00 €\nTotal TVAC   1.210,00 €')
    expect([be.amount_untaxed.value, be.amount.value]).toEqual([1000, 1210])
  })

  it('reads due dates written as a payment deadline in German, French and Italian', () => {
    expect(extractInvoice('Rechnung Nr. 5\nDatum 05.03.2026\nZahlungsziel   19.03.2026').due_date.value).toBe(
      '2026-03-19',
    )
    expect(extractInvoice('Facture N° 5\nDate 05/03/2026\nDate limite de paiement : 04/04/2026').due_date.value).toBe(
      '2026-04-04',
    )
    expect(extractInvoice('Fattura n. 5\nData 05/03/2026\nPagamento entro il 4 aprile 2026').due_date.value).toBe(
      '2026-04-04',
    )
  })

  it('takes a letterhead whose legal form ends in a full stop as the issuer, not the addressee block', () => {
    const f = extractInvoice(
      'Termoidraulica Bianchi & Figli S.n.c.   FATTURA\nCorso Francia 120, 10143 Torino\n\nNumero   Data\n' +
        '2026/FE/0042   05/03/2026\n\nDESTINATARIO\nc/o Studio Amministrazioni Ferri\nVia Roma 15\n\n' +
        'Totale documento   € 1.220,00',
    )
    expect(f.issuer.value).toBe('Termoidraulica Bianchi & Figli S.n.c.')
  })

  it('reads "Tax (6.35%) on $1,372.00   $87.12" as a tax of 87.12 on a base of 1,372.00', () => {
    const f = extractInvoice(
      'Invoice number A1-0042\nSubtotal   $1,372.00\nTax (6.35%) on $1,372.00   $87.12\nTotal   $1,459.12',
    )
    expect([f.amount_untaxed.value, f.tax.value, f.amount.value]).toEqual([1372, 87.12, 1459.12])
  })

  it('reads net and tax from the summary row of a table of several VAT rates, not its first rate', () => {
    const f = extractInvoice(
      'Rechnungsnummer RE-1\nMwSt.-Satz   Netto   MwSt.   Brutto\n7 %   1.066,86   74,68   1.141,54\n' +
        '19 %   1.934,60   367,57   2.302,17\nSumme   3.001,46   442,25   3.443,71\n\nRechnungsbetrag   3.443,71 €',
    )
    expect([f.amount_untaxed.value, f.tax.value, f.amount.value]).toEqual([3001.46, 442.25, 3443.71])
  })

  it("reads a credit note's negative total and net", () => {
    const f = extractInvoice(
      'CREDIT NOTE\nCredit note no:   CN-0042\nNet credit   £-379.00\nVAT 20%   £-75.80\nTotal credit   £-454.80',
    )
    expect([f.invoice_number.value, f.amount_untaxed.value, f.tax.value, f.amount.value]).toEqual([
      'CN-0042',
      -379,
      -75.8,
      -454.8,
    ])
  })

  it('keeps an invoice number whole that spacing split at a slash or inside its digits, never taking a date along', () => {
    // Issue 37: ids cut at a slash or hyphen ("RE-20" for "RE-20201121/508").
    const spaced = extractInvoice('Rechnungsnummer RE-20201121 / 508\nRechnungsdatum 21.11.2020\nGesamt 10,00 €')
    expect(spaced.invoice_number.value).toBe('RE-20201121/508')
    const split = extractInvoice('Rechnungsnummer: RE-20 201121/508\nRechnungsdatum 21.11.2020\nGesamt 10,00 €')
    expect(split.invoice_number.value).toBe('RE-20201121/508')
    const dated = extractInvoice('Rechnungsnummer/Datum: RE-508 / 21.11.2020\nGesamt 10,00 €')
    expect(dated.invoice_number.value).toBe('RE-508')
    expect(extractInvoice('Belegnummer:E2018092011804\nSumme 24,23').invoice_number.value).toBe('E2018092011804')
  })
})
