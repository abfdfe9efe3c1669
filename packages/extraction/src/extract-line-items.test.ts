import { writeFile } from 'node:fs/promises'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir } from '../test/fixtures.ts'
import {
  BUILTIN_SCHEMAS,
  extractFields,
  extractInvoice,
  extractLineItems,
  type LineItem,
  lineItemsSum,
  parsePdfTextLayer,
} from './index.ts'

/** Text placed on an A4 page: x (the right edge when `right`) and y from the top, in points. */
type Placed = { text: string; x: number; y: number; right?: boolean; size?: number }

/** A text PDF with text where a layout tool would put it (pdf-lib, Helvetica): table columns right-aligned. */
async function placedPdf(items: Placed[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  const page = pdf.addPage([595, 842])
  for (const i of items) {
    const size = i.size ?? 10
    const width = font.widthOfTextAtSize(i.text, size)
    page.drawText(i.text, { x: i.right ? i.x - width : i.x, y: 842 - i.y, size, font })
  }
  return pdf.save()
}

/** A row of an item table: description at the left, the figures right-aligned under their headers. */
const row = (y: number, cells: [string, string, string, string], pos?: string): Placed[] => [
  ...(pos ? [{ text: pos, x: 50, y }] : []),
  { text: cells[0], x: 80, y },
  { text: cells[1], x: 330, y, right: true },
  { text: cells[2], x: 440, y, right: true },
  { text: cells[3], x: 545, y, right: true },
]

const values = (items: readonly LineItem[]) =>
  items.map((i) => [i.description.value, i.quantity.value, i.unit_price.value, i.amount.value])

const tmp = await makeTempDir()
afterAll(() => tmp.cleanup())

describe('extractLineItems from a text PDF with word positions (DESIGN, Extraction: invoice `line_items`, each cell a field value with page and bbox)', () => {
  let items: LineItem[]
  beforeAll(async () => {
    const path = tmp.file('rechnung.pdf')
    await writeFile(
      path,
      await placedPdf([
        { text: 'Kestrel Print GmbH', x: 50, y: 60, size: 14 },
        { text: 'Rechnungsnummer: RE-2024/117', x: 50, y: 90 },
        { text: 'Datum: 03.05.2024', x: 50, y: 104 },
        ...row(200, ['Bezeichnung', 'Menge', 'Einzelpreis', 'Gesamt'], 'Pos.'),
        ...row(218, ['Visitenkarten 85 x 55', '2', '1.250,00', '2.500,00'], '1'),
        { text: 'beidseitig, matt', x: 80, y: 229, size: 8 },
        ...row(244, ['Flyer A5', '500', '0,12', '60,00'], '2'),
        { text: 'Zwischensumme', x: 360, y: 280 },
        { text: '2.560,00 €', x: 545, y: 280, right: true },
        { text: 'MwSt. 19%', x: 360, y: 296 },
        { text: '486,40 €', x: 545, y: 296, right: true },
        { text: 'Gesamtbetrag', x: 360, y: 312 },
        { text: '3.046,40 €', x: 545, y: 312, right: true },
      ]),
    )
    const parsed = await parsePdfTextLayer(path)
    items = extractInvoice(parsed!).line_items
  })

  it('reads each row under its German header, decimal commas and thousands dots as numbers', () => {
    expect(values(items)).toEqual([
      ['Visitenkarten 85 x 55 beidseitig, matt', 2, 1250, 2500],
      ['Flyer A5', 500, 0.12, 60],
    ])
  })

  it('stops at the totals block, and the rows add up to the subtotal (lineItemsSum)', () => {
    expect(items).toHaveLength(2)
    expect(lineItemsSum(items)).toBe(2560)
  })

  it('says where each cell was read: page 1 and a box in page fractions, the wrapped description spanning both lines', () => {
    for (const item of items) {
      for (const cell of [item.description, item.quantity, item.unit_price, item.amount]) {
        expect(cell.page).toBe(1)
        expect(cell.bbox).toHaveLength(4)
        for (const n of cell.bbox!) expect(n).toBeGreaterThanOrEqual(0)
      }
    }
    const [x0, y0, , y1] = items[0]!.description.bbox!
    expect(x0).toBeCloseTo(80 / 595, 2)
    expect(y1 - y0).toBeGreaterThan(12 / 842)
    // The amount sits right of the quantity.
    expect(items[0]!.amount.bbox![0]).toBeGreaterThan(items[0]!.quantity.bbox![2])
  })

  it('gives cells that check (quantity × unit price = amount, sum = subtotal) high confidence', () => {
    for (const item of items) expect(item.amount.confidence).toBeGreaterThanOrEqual(0.9)
  })
})

describe('extractLineItems from plain text (no positions)', () => {
  it('reads a till slip through misread decimal marks and a garbled quantity line', () => {
    const items = extractLineItems(
      [
        'CAFE AM MARKT',
        '80331 München',
        'TEA                                33:57',
        'SUSI',
        'APPLES                             26,80',
        '2 x 13,40',
        'MILK 1L                           23,68',
        'TOTAL                           113-55 €',
        'Bar                               120,00',
      ].join('\n'),
    )
    expect(values(items)).toEqual([
      ['TEA', 1, 33.57, 33.57],
      ['APPLES', 2, 13.4, 26.8],
      ['MILK 1L', 1, 23.68, 23.68],
    ])
  })

  it('reads an English table: columns in order, rows until the subtotal, no page or bbox', () => {
    const items = extractLineItems(
      [
        'INVOICE  INV-2024-0042',
        'Description          Qty   Unit Price     Amount',
        'Consulting hours       12       150.00   1,800.00',
        'Hosting (monthly)       1        49.90      49.90',
        'Subtotal                                1,849.90',
        'Tax 8%                                    147.99',
        'Total Due                              $1,997.89',
      ].join('\n'),
    )
    expect(values(items)).toEqual([
      ['Consulting hours', 12, 150, 1800],
      ['Hosting (monthly)', 1, 49.9, 49.9],
    ])
    expect(items[0]!.amount.page).toBeUndefined()
    expect(items[0]!.amount.bbox).toBeUndefined()
  })

  it('reads French, Dutch, Spanish and Italian headers (vocabulary per locale) with decimal commas', () => {
    const table = (header: string, end: string): LineItem[] =>
      extractLineItems(
        [header, 'Papier A4      3     4,50     13,50', 'Toner          1    89,00     89,00', `${end}   102,50`].join(
          '\n',
        ),
      )
    for (const [header, end] of [
      ['Désignation   Qté   Prix unitaire   Montant', 'Total HT'],
      ['Omschrijving   Aantal   Prijs   Bedrag', 'Subtotaal'],
      ['Descripción   Cant.   Precio   Importe', 'Base imponible'],
      ['Descrizione   Q.tà   Prezzo   Importo', 'Imponibile'],
    ] as const) {
      expect(values(table(header, end)), header).toEqual([
        ['Papier A4', 3, 4.5, 13.5],
        ['Toner', 1, 89, 89],
      ])
    }
  })

  it('reads single-spaced columns (a text layer that kept one space): "12 150.00" is a quantity and a price', () => {
    const items = extractLineItems(
      'Description Qty Unit Price Amount\nConsulting hours 12 150.00 1,800.00\nTotal 1,800.00',
    )
    expect(values(items)).toEqual([['Consulting hours', 12, 150, 1800]])
  })

  it('reads a figure written in the document convention: 1,250 is one and a quarter where commas are decimal', () => {
    const items = extractLineItems(
      ['Bezeichnung   Menge   Einzelpreis   Gesamt', 'Kabel   1,250   8,00   10,00', 'Summe   10,00'].join('\n'),
    )
    expect(values(items)).toEqual([['Kabel', 1.25, 8, 10]])
  })

  it('lowers the confidence of a row whose quantity × unit price is not its amount', () => {
    const items = extractLineItems(
      [
        'Description   Qty   Unit Price   Amount',
        'Widget   2   10.00   20.00',
        'Gadget   3   10.00   45.00',
        'Subtotal   65.00',
      ].join('\n'),
    )
    const [good, bad] = items
    expect(good!.amount.confidence).toBeGreaterThan(bad!.amount.confidence)
    expect(bad!.quantity.confidence).toBeLessThan(0.6)
  })

  it('checks the rows against the totals the invoice extractor chose: a sum that adds up raises the amounts', () => {
    const lines = ['Description   Qty   Unit Price   Amount', 'Widget   2   10.00   20.00', 'Gadget   1   5.00   5.00']
    const adds = extractInvoice([...lines, 'Subtotal   25.00', 'VAT   5.00', 'Total   30.00'].join('\n')).line_items
    const off = extractInvoice([...lines, 'Subtotal   27.00', 'VAT   5.40', 'Total   32.40'].join('\n')).line_items
    expect(adds[0]!.amount.confidence).toBeGreaterThan(off[0]!.amount.confidence)
  })

  it('reads a till slip without a header: "2 x NAME", "NAME 2 @ price", and "2 x price" on the line below', () => {
    const items = extractLineItems(
      [
        'CORNER SHOP LTD',
        '22 High Street',
        'VAT No 123 4567 89',
        '02/12/2024 11:02   #2435',
        '',
        '2 x COFFEE          7.00',
        'EGGS 10             2.40',
        'MILK 1L 3 @ 1.20    3.60',
        'APPLES              3.00',
        '  2 x 1.50',
        '------------------------',
        'TOTAL              16.00',
        'CASH               20.00',
        'CHANGE              4.00',
      ].join('\n'),
    )
    expect(values(items)).toEqual([
      ['COFFEE', 2, 3.5, 7],
      ['EGGS 10', 1, 2.4, 2.4],
      ['MILK 1L', 3, 1.2, 3.6],
      ['APPLES', 2, 1.5, 3],
    ])
    expect(lineItemsSum(items)).toBe(16)
  })

  it('finds no rows in a document without an item table', () => {
    expect(extractLineItems('Dear customer,\nthank you for your order of 12 May.\nTotal paid: 40.00 EUR')).toEqual([])
    expect(lineItemsSum([])).toBeNull()
  })

  it('is part of the built-in invoice schema: extractFields returns line_items beside the key fields', () => {
    const data = extractFields(
      'Invoice No: A-1\nDescription   Qty   Price   Amount\nSupport plan   1   99.00   99.00\nTotal   99.00',
      BUILTIN_SCHEMAS.invoice,
    )
    expect(values(data.line_items as LineItem[])).toEqual([['Support plan', 1, 99, 99]])
  })

  it('a declared schema may name a line_items field of its own: the table is read without the invoice extractor', () => {
    const data = extractFields('PO 77\nItem   Qty   Rate   Total\nBolts M6   100   0.05   5.00\nTotal   5.00', {
      fields: [
        { name: 'po', type: 'string', labels: ['PO'] },
        { name: 'items', type: 'line_items', required: true },
      ],
    })
    expect(values(data.items as LineItem[])).toEqual([['Bolts M6', 100, 0.05, 5]])
  })
})
