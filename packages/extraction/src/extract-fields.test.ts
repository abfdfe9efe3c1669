import { describe, expect, it } from 'vitest'
import { BUILTIN_SCHEMAS, extractFields, scalarFields, type ExtractedFields, type SchemaDefinition } from './index.ts'

type Expected = Partial<
  Record<
    'invoice_number' | 'date' | 'due_date' | 'issuer' | 'amount' | 'amount_untaxed' | 'tax' | 'currency',
    string | number | null
  >
>

function expectInvoice(text: string, expected: Expected): ExtractedFields {
  const data = extractFields(text, BUILTIN_SCHEMAS.invoice)
  expect(Object.keys(data).sort()).toEqual([
    'amount',
    'amount_untaxed',
    'currency',
    'date',
    'due_date',
    'invoice_number',
    'issuer',
    'line_items',
    'tax',
  ])
  const fields = scalarFields(data)
  for (const [name, value] of Object.entries(expected)) {
    expect(fields[name]?.value, name).toEqual(value)
    if (value === null) expect(fields[name]?.confidence, name).toBe(0)
    else expect(fields[name]!.confidence, name).toBeGreaterThan(0)
  }
  for (const field of Object.values(fields)) {
    expect(field.confidence).toBeGreaterThanOrEqual(0)
    expect(field.confidence).toBeLessThanOrEqual(1)
  }
  return fields
}

describe('extractFields with the built-in invoice schema (layouts it has never seen)', () => {
  it('UK layout: "Invoice No", dd/mm/yyyy, £, subtotal/VAT/Total Due, item table with a Total column', () => {
    const fields = expectInvoice(
      `ACME Widgets Ltd
12 High Street
London EC1A 1BB
VAT No: GB123456789

TAX INVOICE

Invoice No: INV-2024-0042
Invoice Date: 05/03/2024
Due Date: 04/04/2024

Bill To:
Globex Corporation
1 Main Road, Springfield

Description            Qty   Unit Price   Total
Widget                 2     £50.00       £100.00
Gadget                 1     £100.00      £100.00

Subtotal: £200.00
VAT (20%): £40.00
Total Due: £240.00`,
      {
        invoice_number: 'INV-2024-0042',
        date: '2024-03-05',
        due_date: '2024-04-04',
        issuer: 'ACME Widgets Ltd',
        amount: 240,
        amount_untaxed: 200,
        tax: 40,
        currency: 'GBP',
      },
    )
    // Total = subtotal + tax: the three figures confirm each other.
    expect(fields.amount!.confidence).toBeGreaterThanOrEqual(0.95)
    expect(fields.invoice_number!.confidence).toBeGreaterThanOrEqual(0.9)
  })

  it('US layout: "INVOICE #", month names, values in a right-hand column, sales tax, $', () => {
    expectInvoice(
      `Initech LLC
500 Oak Avenue, Austin, TX 78701
Phone: (512) 555-0100

INVOICE # 10457
Date: March 5, 2024
Payment Due: April 4, 2024

Sold To: Umbrella Inc.

Item                         Amount
Consulting services          $1,200.00
Sales Tax (8.25%)            $99.00
Amount Due                   $1,299.00`,
      {
        invoice_number: '10457',
        date: '2024-03-05',
        due_date: '2024-04-04',
        issuer: 'Initech LLC',
        amount: 1299,
        tax: 99,
        currency: 'USD',
      },
    )
  })

  it('German layout: Rechnungsnummer, dd.mm.yyyy, 1.234,56 EUR, Nettobetrag/MwSt/Gesamtbetrag', () => {
    expectInvoice(
      `Müller & Schmidt GmbH
Hauptstraße 5, 10115 Berlin

Rechnung
Rechnungsnummer: RE-2024/117
Rechnungsdatum: 05.03.2024
Zahlbar bis: 19.03.2024

Nettobetrag: 1.000,00 EUR
MwSt 19%: 190,00 EUR
Gesamtbetrag: 1.190,00 EUR`,
      {
        invoice_number: 'RE-2024/117',
        date: '2024-03-05',
        due_date: '2024-03-19',
        issuer: 'Müller & Schmidt GmbH',
        amount: 1190,
        amount_untaxed: 1000,
        tax: 190,
        currency: 'EUR',
      },
    )
  })

  it('header row of labels over a row of values, ISO dates, "Net amount" and "Balance Due"', () => {
    expectInvoice(
      `Bright Ideas Studio
Invoice Number   Invoice Date   Due Date
BI-7781          2024-03-05     2024-04-04

Net amount      EUR 99.50
Tax             EUR 0.00
Balance Due     EUR 99.50`,
      {
        invoice_number: 'BI-7781',
        date: '2024-03-05',
        due_date: '2024-04-04',
        issuer: 'Bright Ideas Studio',
        amount: 99.5,
        amount_untaxed: 99.5,
        tax: 0,
        currency: 'EUR',
      },
    )
  })

  it('"From:"/"Bill No."/"Issued"/"Pay by", ordinal dates, Swedish kronor with space thousands', () => {
    expectInvoice(
      `FROM: Nordic Design AB
TO: Stark Industries
Bill No. 2024-88
Issued: 5 March 2024
Pay by: 5th of April, 2024
Amount excl. VAT   kr 1 000,00
VAT 25%   kr 250,00
Grand Total   SEK 1 250,00`,
      {
        invoice_number: '2024-88',
        date: '2024-03-05',
        due_date: '2024-04-05',
        issuer: 'Nordic Design AB',
        amount: 1250,
        amount_untaxed: 1000,
        tax: 250,
        currency: 'SEK',
      },
    )
  })

  it('OCR-style: every value on the line below its label, € amounts in the European format', () => {
    expectInvoice(
      `Studio Verde S.r.l.
Via Roma 10
20121 Milano

Invoice number
A-1001
Date of issue
5 Mar 2024
Due date
4 Apr 2024

Total excluding VAT
€ 1.000,00
VAT 22%
€ 220,00
Total
€ 1.220,00`,
      {
        invoice_number: 'A-1001',
        date: '2024-03-05',
        due_date: '2024-04-04',
        issuer: 'Studio Verde S.r.l.',
        amount: 1220,
        amount_untaxed: 1000,
        tax: 220,
        currency: 'EUR',
      },
    )
  })

  it('US month-first numeric dates are read month first when another date proves the order', () => {
    expectInvoice(
      `Blue Harbor Supply Co.
Invoice Date: 03/05/2024
Due: 03/20/2024
Reference: BH-99120
Subtotal $410.00
Tax $32.80
Total $442.80`,
      {
        invoice_number: 'BH-99120',
        date: '2024-03-05',
        due_date: '2024-03-20',
        amount: 442.8,
        amount_untaxed: 410,
        tax: 32.8,
        currency: 'USD',
      },
    )
  })

  it('Stripe-like receipt: "Date of issue", "Date due", amount due with the code after the number', () => {
    expectInvoice(
      `Invoice
Invoice number 3F2A9C10-0001
Date of issue March 5, 2024
Date due April 4, 2024

Cloudy Software Inc.
1 Market St
San Francisco, CA 94105

Bill to
Jane Doe

Description   Qty   Unit price   Amount
Pro plan      1     $100.00      $100.00

Subtotal $100.00
Total $100.00
Amount due $100.00 USD`,
      {
        invoice_number: '3F2A9C10-0001',
        date: '2024-03-05',
        due_date: '2024-04-04',
        issuer: 'Cloudy Software Inc.',
        amount: 100,
        amount_untaxed: 100,
        currency: 'USD',
      },
    )
  })

  it('"Total" is not taken from "Subtotal", "Total excl. VAT", "Total items" or "Amount paid"', () => {
    expectInvoice(
      `Hoekstra Bouw B.V.
Factuurnummer / Invoice No: 2024-0031
Invoice date: 1 February 2024
Total items: 3
Total excl. VAT: 500,00
VAT 21%: 105,00
Total incl. VAT: 605,00
Amount paid: 100,00
EUR`,
      { invoice_number: '2024-0031', date: '2024-02-01', amount: 605, amount_untaxed: 500, tax: 105, currency: 'EUR' },
    )
  })

  it('a yen receipt without decimals, and a missing due date computed from "Net 30" terms', () => {
    expectInvoice(
      `Sakura Trading K.K.
Receipt No: R-55102
Date: 2024-01-15
Payment terms: Net 30
Subtotal: ¥10,000
Consumption tax: ¥1,000
Total: ¥11,000`,
      {
        invoice_number: 'R-55102',
        date: '2024-01-15',
        due_date: '2024-02-14',
        amount: 11000,
        amount_untaxed: 10000,
        tax: 1000,
        currency: 'JPY',
      },
    )
  })

  it('two-column PDF text: labels and values in the right column, MM/DD/YYYY with $, TOTAL at the bottom', () => {
    expectInvoice(
      `Acme Corporation                         INVOICE
123 Business Rd                          Invoice #:     2024-1187
Springfield, IL 62704                    Date:          04/15/2024
                                         Due Date:      05/15/2024
Bill To:                                 Ship To:
John Smith                               John Smith
Smith Hardware                           456 Elm St

QTY   DESCRIPTION          UNIT PRICE    AMOUNT
2     Hammer               12.50         25.00
1     Drill                89.99         89.99

                                  SUBTOTAL      114.99
                                  TAX 6.25%     7.19
                                  TOTAL         $122.18`,
      {
        invoice_number: '2024-1187',
        date: '2024-04-15',
        due_date: '2024-05-15',
        issuer: 'Acme Corporation',
        amount: 122.18,
        amount_untaxed: 114.99,
        tax: 7.19,
        currency: 'USD',
      },
    )
  })

  it('Australian tax invoice: "$" with an ABN is AUD, GST included in the total, day-first dates', () => {
    expectInvoice(
      `ABN 12 345 678 901
Koala Cafe Pty Ltd
Tax Invoice
Invoice: 000123
Date: 3/4/2024
Item: Catering
Total (inc GST): $550.00
GST included: $50.00`,
      {
        invoice_number: '000123',
        date: '2024-04-03',
        issuer: 'Koala Cafe Pty Ltd',
        amount: 550,
        tax: 50,
        amount_untaxed: 500,
        currency: 'AUD',
      },
    )
  })

  it('OCR of a table: one line of labels over one line of values, single spaces only', () => {
    expectInvoice(
      `Pixel Forge Ltd
Invoice No Invoice Date Due Date
PF-301 5 March 2024 4 April 2024
Subtotal 82.50
VAT 16.50
Amount Due (GBP): 99.00`,
      {
        invoice_number: 'PF-301',
        date: '2024-03-05',
        due_date: '2024-04-04',
        amount: 99,
        amount_untaxed: 82.5,
        tax: 16.5,
        currency: 'GBP',
      },
    )
  })

  it('reports fields it cannot find as { value: null, confidence: 0 }', () => {
    const fields = extractFields('Hello, this is just a short note with nothing to extract.', BUILTIN_SCHEMAS.invoice)
    expect(fields.invoice_number).toEqual({ value: null, confidence: 0 })
    expect(fields.amount).toEqual({ value: null, confidence: 0 })
    expect(fields.date).toEqual({ value: null, confidence: 0 })
    expect(fields.currency).toEqual({ value: null, confidence: 0 })
  })
})

describe('extractFields with a declared schema', () => {
  const schema: SchemaDefinition = {
    fields: [
      { name: 'po_number', type: 'string', labels: ['PO Number', 'Purchase Order'] },
      { name: 'order_date', type: 'date', labels: ['Order Date'] },
      { name: 'weight_kg', type: 'number', labels: ['Gross Weight'] },
      { name: 'freight', type: 'amount', labels: ['Freight Charge'] },
      { name: 'tracking', type: 'string', pattern: String.raw`Tracking:\s*([A-Z0-9]{10,})` },
      { name: 'currency', type: 'currency' },
      { name: 'carrier', type: 'string' },
      { name: 'missing', type: 'date', labels: ['Delivery Date'], required: true },
    ],
  }
  const text = `Shipping note
PO Number: PO-88123
Order Date: 7 June 2024
Carrier: Fast Freight Ltd
Gross Weight: 1,250.5 kg
Freight Charge: CHF 320.00
Tracking: 1Z999AA10123456784`

  it('reads each field by its labels, pattern or humanised name and normalises the values', () => {
    expect(extractFields(text, schema)).toEqual({
      po_number: { value: 'PO-88123', confidence: expect.any(Number) },
      order_date: { value: '2024-06-07', confidence: expect.any(Number) },
      weight_kg: { value: 1250.5, confidence: expect.any(Number) },
      freight: { value: 320, confidence: expect.any(Number) },
      tracking: { value: '1Z999AA10123456784', confidence: 0.95 },
      currency: { value: 'CHF', confidence: expect.any(Number) },
      carrier: { value: 'Fast Freight Ltd', confidence: expect.any(Number) },
      missing: { value: null, confidence: 0 },
    })
  })

  it('gives an exact label with a well-formed value more confidence than a guess', () => {
    const fields = scalarFields(extractFields(text, schema))
    expect(fields.po_number!.confidence).toBeGreaterThan(0.85)
    // The currency has no label: it is inferred from "CHF 320.00", so it scores lower.
    expect(fields.currency!.confidence).toBeLessThan(fields.po_number!.confidence)
  })

  it('prefers the pattern over labels, and falls back to labels when the pattern does not match', () => {
    const withPattern: SchemaDefinition = {
      fields: [
        { name: 'invoice_number', type: 'string', labels: ['Invoice No'], pattern: String.raw`\b(INV\d{6})\b` },
        { name: 'total', type: 'amount', labels: ['Total'], pattern: String.raw`Grand sum=(\S+)` },
      ],
    }
    const fields = scalarFields(extractFields('Invoice No: 42\nRef INV123456\nTotal: 1.234,50 EUR', withPattern))
    expect(fields.invoice_number).toEqual({ value: 'INV123456', confidence: 0.95 })
    expect(fields.total?.value).toBe(1234.5)
  })

  it('extends the built-in invoice schema with its own labels and extra fields', () => {
    const extended: SchemaDefinition = {
      builtin: 'invoice',
      fields: [
        { name: 'invoice_number', type: 'string', labels: ['Beleg'] },
        { name: 'amount', type: 'amount' },
        { name: 'project', type: 'string', labels: ['Project'] },
      ],
    }
    const fields = extractFields(
      'Kleinbetrieb Huber e.K.\nBeleg: B-7781\nProject: Roof repair\nTotal: 80,00 EUR',
      extended,
    )
    expect(fields).toEqual({
      invoice_number: { value: 'B-7781', confidence: expect.any(Number) },
      amount: { value: 80, confidence: expect.any(Number) },
      project: { value: 'Roof repair', confidence: expect.any(Number) },
    })
  })
})
