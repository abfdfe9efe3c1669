import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import {
  BUILTIN_SCHEMAS,
  createOcrEngine,
  extractFields,
  scalarFields,
  findPdftoppm,
  parseDocument,
  parsePdfTextLayer,
  type OcrEngine,
} from './index.ts'
import { openPdf } from './pdf-document.ts'
import { rasterisePdfPage } from './rasterise-pdf-page.ts'
import {
  FONT_AVAILABLE,
  makeBmp,
  makeDocx,
  makeImagePdf,
  makeMultiPageTiff,
  makeTempDir,
  makeTextPdf,
  makeTwoColumnPdf,
  renderTextPng,
  writeFixture,
} from '../test/fixtures.ts'

const INVOICE_LINES = [
  'Northwind Traders Ltd',
  '21 Harbour Road, Bristol BS1 4DJ',
  '',
  'INVOICE',
  'Invoice No: NW-58213',
  'Invoice Date: 12 March 2024',
  'Due Date: 11 April 2024',
  'Bill To: Contoso Pharmaceuticals',
  '',
  'Subtotal: GBP 1,150.00',
  'VAT 20%: GBP 230.00',
  'Total Due: GBP 1,380.00',
]

describe.skipIf(!FONT_AVAILABLE)('parseDocument', { timeout: 60_000 }, () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>
  let ocr: OcrEngine
  let invoicePng: Buffer

  beforeAll(async () => {
    tmp = await makeTempDir()
    ocr = createOcrEngine()
    invoicePng = await renderTextPng(INVOICE_LINES, { width: 1000, fontSize: 26 })
  }, 30_000)
  afterAll(async () => {
    await ocr.close()
    await tmp.cleanup()
  }, 30_000)

  it('returns the text of each PDF page without OCR when the PDF has text', async () => {
    const path = await writeFixture(
      tmp.file('text.pdf'),
      await makeTextPdf([
        ['Quire test document, page one.', 'Hello from pdf-lib.'],
        ['Second page: invoice number 4711.', 'Total due 99.50 EUR.'],
        ['Third page.'],
      ]),
    )
    const parsed = await parseDocument(path, 'pdf', { ocr })
    expect(parsed.ocrPages).toEqual([])
    expect(parsed.pages).toEqual([
      'Quire test document, page one.\nHello from pdf-lib.',
      'Second page: invoice number 4711.\nTotal due 99.50 EUR.',
      'Third page.',
    ])
  })

  it('reads a text PDF’s text layer alone exactly as parseDocument does, and declines a page that needs OCR', async () => {
    const text = await writeFixture(
      tmp.file('text-layer.pdf'),
      await makeTextPdf([INVOICE_LINES, ['Second page: invoice number 4711.', 'Total due 99.50 EUR.']]),
    )
    const layer = await parsePdfTextLayer(text)
    expect(layer).not.toBeNull()
    expect(layer).toEqual(await parseDocument(text, 'pdf', { ocr }))
    expect(layer?.layouts[0]?.words.length).toBeGreaterThan(0)
    // An image-only page has no text layer to speak of: the caller has to OCR it (parseDocument).
    const scan = await writeFixture(
      tmp.file('text-layer-scan.pdf'),
      await makeImagePdf([await renderTextPng(['Scanned page'], { width: 600, fontSize: 30 })]),
    )
    expect(await parsePdfTextLayer(scan)).toBeNull()
  })

  it('keeps label and value columns apart in PDF text and reads them back', async () => {
    const path = await writeFixture(
      tmp.file('columns.pdf'),
      await makeTwoColumnPdf([
        ['Invoice Number', 'C-2024-77'],
        ['Issue Date', '2024-02-29'],
        ['Amount Due', 'USD 412.30'],
      ]),
    )
    const { pages } = await parseDocument(path, 'pdf', { ocr })
    expect(pages[0]).toMatch(/^Invoice Number {2,}C-2024-77\nIssue Date {2,}2024-02-29\nAmount Due {2,}USD 412\.30$/)
    const fields = scalarFields(extractFields(pages[0]!, BUILTIN_SCHEMAS.invoice))
    expect(fields.invoice_number?.value).toBe('C-2024-77')
    expect(fields.date?.value).toBe('2024-02-29')
    expect(fields.amount?.value).toBe(412.3)
    expect(fields.currency?.value).toBe('USD')
  })

  it('OCRs a PNG invoice and extracts its number and total end to end', { timeout: 60_000 }, async () => {
    const path = await writeFixture(tmp.file('invoice.png'), invoicePng)
    const parsed = await parseDocument(path, 'png', { ocr })
    expect(parsed.ocrPages).toEqual([1])
    expect(parsed.pages).toHaveLength(1)
    const fields = scalarFields(extractFields(parsed.pages[0]!, BUILTIN_SCHEMAS.invoice))
    expect(fields.invoice_number).toMatchObject({ value: 'NW-58213' })
    expect(fields.amount).toMatchObject({ value: 1380 })
    expect(fields.amount_untaxed?.value).toBe(1150)
    expect(fields.tax?.value).toBe(230)
    expect(fields.currency?.value).toBe('GBP')
    expect(fields.date?.value).toBe('2024-03-12')
    expect(fields.due_date?.value).toBe('2024-04-11')
    expect(fields.issuer?.value).toBe('Northwind Traders Ltd')
    expect(fields.amount!.confidence).toBeGreaterThan(0.8)

    // From the parsed document (OCR words with boxes) each value also says where it was read.
    const located = scalarFields(extractFields(parsed, BUILTIN_SCHEMAS.invoice))
    expect(located.amount).toMatchObject({ value: 1380, page: 1 })
    expect(located.invoice_number).toMatchObject({ value: 'NW-58213', page: 1 })
    const bbox = located.amount!.bbox
    expect(bbox).toHaveLength(4)
    for (const n of bbox!) {
      expect(n).toBeGreaterThanOrEqual(0)
      expect(n).toBeLessThanOrEqual(1)
    }
    const [x0, y0, x1, y1] = bbox!
    expect(x1).toBeGreaterThan(x0)
    expect(y1).toBeGreaterThan(y0)
    // "Total Due: GBP 1,380.00" is the image's last line: its value sits low on the page, right of the label.
    expect(y0).toBeGreaterThan(0.5)
    expect(x0).toBeGreaterThan(0.15)
  })

  it('OCRs an image-only (scanned) PDF page and keeps the text page as text', { timeout: 90_000 }, async () => {
    const scan = await renderTextPng(['Scanned page', 'Reference: SCAN-4411', 'Grand Total: EUR 77.10'], {
      width: 900,
      fontSize: 30,
    })
    const pdf = await makeImagePdf([scan])
    // Append a text page behind the scanned one by building a mixed document.
    const { PDFDocument, StandardFonts } = await import('pdf-lib')
    const doc = await PDFDocument.load(pdf)
    const font = await doc.embedFont(StandardFonts.Helvetica)
    doc.addPage([595, 842]).drawText('A normal text page with enough characters.', { x: 50, y: 780, size: 12, font })
    const path = await writeFixture(tmp.file('scan.pdf'), await doc.save())

    const rasterisers = ['pdfjs', ...((await findPdftoppm()) ? (['pdftoppm'] as const) : [])] as const
    for (const rasteriser of rasterisers) {
      const parsed = await parseDocument(path, 'pdf', { ocr, rasteriser, dpi: 200 })
      expect(parsed.ocrPages, rasteriser).toEqual([1])
      expect(parsed.pages[0], rasteriser).toMatch(/Reference: SCAN-4411/)
      expect(parsed.pages[0], rasteriser).toMatch(/Grand Total: EUR 77\.10/)
      expect(parsed.pages[1], rasteriser).toBe('A normal text page with enough characters.')
    }
  })

  it('renders text PDF pages for OCR with pdf.js on Node 20 (transferToFixedLength polyfill) and with pdftoppm', {
    timeout: 90_000,
  }, async () => {
    const path = await writeFixture(
      tmp.file('render.pdf'),
      await makeTextPdf([['Rendered for OCR', 'Order number 31337', 'Total 45.60 EUR']]),
    )
    const rasterisers = ['pdfjs', ...((await findPdftoppm()) ? (['pdftoppm'] as const) : [])] as const
    const doc = await openPdf(path, { withCanvas: true })
    try {
      for (const rasteriser of rasterisers) {
        const png = await rasterisePdfPage({ path, doc, pageNumber: 1, rasteriser, dpi: 200 })
        const meta = await sharp(png).metadata()
        expect(meta.width, rasteriser).toBeCloseTo((595 / 72) * 200, -1)
        // Without the polyfill pdf.js renders text pages blank (all white).
        const { channels } = await sharp(png).stats()
        expect(channels[0]!.min, rasteriser).toBeLessThan(100)
        const { text } = await ocr.recognize(png)
        expect(text, rasteriser).toMatch(/Order number 31337/)
        expect(text, rasteriser).toMatch(/Total 45\.60 EUR/)
      }
    } finally {
      await doc.destroy()
    }
  })

  it('OCRs each page of a multi-page TIFF, and BMP, GIF, WebP and JPEG images', { timeout: 90_000 }, async () => {
    const one = await renderTextPng(['First page of the fax', 'Order 1001'], { width: 700 })
    const two = await renderTextPng(['Second page of the fax', 'Order 2002'], { width: 700 })
    const tiff = await writeFixture(tmp.file('fax.tiff'), await makeMultiPageTiff([one, two]))
    const parsed = await parseDocument(tiff, 'tiff', { ocr })
    expect(parsed.ocrPages).toEqual([1, 2])
    expect(parsed.pages[0]).toContain('Order 1001')
    expect(parsed.pages[1]).toContain('Order 2002')

    const images = {
      bmp: await makeBmp(one),
      gif: await sharp(one).gif().toBuffer(),
      webp: await sharp(one).webp({ lossless: true }).toBuffer(),
      jpeg: await sharp(one).jpeg({ quality: 90 }).toBuffer(),
    } as const
    for (const [type, data] of Object.entries(images) as [keyof typeof images, Buffer][]) {
      const path = await writeFixture(tmp.file(`image.${type}`), data)
      const result = await parseDocument(path, type, { ocr })
      expect(result.pages[0], type).toContain('Order 1001')
    }
  })

  it('reports OCR failures as errors instead of crashing or hanging the process', async () => {
    const garbage = await writeFixture(tmp.file('garbage.bmp'), Buffer.from('BM this is not a bitmap'))
    await expect(ocr.recognize(garbage)).rejects.toMatchObject({ name: 'ExtractionError', code: 'ocr_failed' })
    // The engine keeps working after a failed job.
    expect((await ocr.recognize(await renderTextPng(['Still working'], { width: 500 }))).text).toContain(
      'Still working',
    )
    const noModel = createOcrEngine({ engine: 'tesseract', langPath: tmp.dir })
    await expect(noModel.recognize(invoicePng)).rejects.toMatchObject({ code: 'ocr_unavailable' })
    await noModel.close()
  })

  it('splits DOCX text into pages of about 3,000 characters', async () => {
    const short = await writeFixture(tmp.file('short.docx'), await makeDocx(['Invoice No: D-1', 'Total: 10.00 EUR']))
    expect(await parseDocument(short, 'docx')).toEqual({
      pages: ['Invoice No: D-1\nTotal: 10.00 EUR'],
      ocrPages: [],
      layouts: [null],
    })

    const paragraphs = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i + 1}: ${'words and more words '.repeat(8).trim()}.`,
    )
    const long = await writeFixture(tmp.file('long.docx'), await makeDocx(paragraphs))
    const parsed = await parseDocument(long, 'docx')
    const total = paragraphs.join('\n').length
    expect(parsed.pages).toHaveLength(Math.ceil(total / 3000))
    expect(parsed.pages.join('\n')).toBe(paragraphs.join('\n'))
    for (const page of parsed.pages) expect(page.length).toBeLessThanOrEqual(3000)
    expect(parsed.pages[1]).toMatch(/^Paragraph \d+:/)
  })
})
