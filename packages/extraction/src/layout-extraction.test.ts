import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { makeTempDir } from '../test/fixtures.ts'
import { extractInvoice, layoutText, parseDocument, wordsFromTsv, type LayoutWord } from './index.ts'
import { writeFile } from 'node:fs/promises'

const word = (text: string, x0: number, y0: number, x1: number, y1: number, group?: number): LayoutWord => ({
  text,
  box: [x0, y0, x1, y1],
  ...(group !== undefined ? { group } : {}),
})

describe('layoutText', () => {
  it('rebuilds rows and columns from positioned words, whatever order they come in', () => {
    const { text, spans } = layoutText([
      word('1,200.00', 0.8, 0.5, 0.9, 0.52),
      word('Total', 0.1, 0.5, 0.16, 0.52),
      word('Invoice', 0.1, 0.1, 0.18, 0.12),
      word('No', 0.19, 0.1, 0.22, 0.12),
    ])
    expect(text).toBe('Invoice No\n\nTotal   1,200.00')
    const total = spans.find((s) => text.slice(s.start, s.end) === '1,200.00')
    expect(total?.box).toEqual([0.8, 0.5, 0.9, 0.52])
  })

  it('keeps a tilted scan line on one row (skew measured from OCR lines)', () => {
    const slope = 0.035
    const line = (y: number, g: number, texts: string[]): LayoutWord[] =>
      texts.map((t, i) => {
        const x = 0.1 + i * 0.2
        const top = y + slope * x
        return word(t, x, top, x + 0.1, top + 0.015, g)
      })
    const { text } = layoutText([
      ...line(0.2, 1, ['Invoice', 'Date', '01/02/2024', 'x', 'y']),
      ...line(0.225, 2, ['Total', 'Due', '99.00', 'EUR', 'z']),
    ])
    expect(text.split('\n')).toHaveLength(2)
    expect(text.split('\n')[1]).toContain('Total')
    expect(text.split('\n')[1]).toContain('99.00')
  })

  it('keeps a tilted till slip row on one row when each run is one box (skew from words facing each other)', () => {
    // An engine that boxes whole runs (PaddleOCR): an item and its amount are two runs, the amount lower by the tilt
    // (more than half a word height: without the skew they fall on two rows).
    const slope = 0.015
    const rows = [
      ['TEA', '33,57'],
      ['3 x 11,19', ''],
      ['APPLES', '26,80'],
      ['2 x 13,40', ''],
      ['Summe EUR', '114,33'],
    ]
    let group = 0
    const words = rows.flatMap(([left, right], i) => {
      const y = 0.2 + i * 0.03
      const out = [word(left as string, 0.05, y + slope * 0.05, 0.3, y + slope * 0.05 + 0.018, group++)]
      if (right) out.push(word(right, 0.75, y + slope * 0.75, 0.95, y + slope * 0.75 + 0.018, group++))
      return out
    })
    const lines = layoutText(words).text.split('\n')
    expect(lines[0]).toMatch(/^TEA\s+33,57$/)
    expect(lines).toContain('APPLES   26,80')
    expect(lines.at(-1)).toMatch(/^Summe EUR\s+114,33$/)
  })
})

describe('wordsFromTsv', () => {
  it('reads word boxes as page fractions and confidences as 0..1', () => {
    const tsv = ['1\t1\t0\t0\t0\t0\t0\t0\t1000\t2000\t-1\t', '5\t1\t1\t1\t1\t1\t100\t200\t300\t40\t91.5\tTotal'].join(
      '\n',
    )
    expect(wordsFromTsv(tsv)).toEqual([{ text: 'Total', box: [0.1, 0.1, 0.4, 0.12], conf: 0.915, group: 1001001 }])
  })
})

describe('extraction with positions', () => {
  it('reads a value under its label in a table cell and says on which page and where', {
    timeout: 30_000,
  }, async () => {
    const pdf = await PDFDocument.create()
    const font = await pdf.embedFont(StandardFonts.Helvetica)
    pdf.addPage([595, 842]).drawText('Cover letter for the invoice on the next page', { x: 50, y: 780, size: 12, font })
    const page = pdf.addPage([595, 842])
    const draw = (s: string, x: number, y: number) => page.drawText(s, { x, y, size: 10, font })
    draw('Brightwater Studio GmbH', 50, 790)
    draw('Rechnungsnummer', 350, 790)
    draw('Datum', 470, 790)
    draw('RE-2024-117', 350, 776)
    draw('03.05.2024', 470, 776)
    draw('Nettobetrag', 350, 300)
    draw('1.000,00 EUR', 470, 300)
    draw('MwSt. 19%', 350, 285)
    draw('190,00 EUR', 470, 285)
    draw('Gesamtbetrag', 350, 270)
    draw('1.190,00 EUR', 470, 270)
    const tmp = await makeTempDir()
    try {
      await writeFile(tmp.file('invoice.pdf'), await pdf.save())
      const parsed = await parseDocument(tmp.file('invoice.pdf'), 'pdf')
      expect(parsed.layouts).toHaveLength(2)
      const fields = extractInvoice(parsed)
      expect(fields.invoice_number).toMatchObject({ value: 'RE-2024-117', page: 2 })
      expect(fields.date).toMatchObject({ value: '2024-05-03', page: 2 })
      expect(fields.amount).toMatchObject({ value: 1190, page: 2 })
      const [x0, y0, x1, y1] = fields.invoice_number.bbox!
      // Drawn at x 350 pt of 595 and just below the top (y 776 pt of 842 from the bottom).
      expect(x0).toBeCloseTo(350 / 595, 2)
      expect(x1).toBeGreaterThan(x0)
      expect(y0).toBeGreaterThan(0.05)
      expect(y1).toBeLessThan(0.1)
      expect(fields.amount.bbox![1]).toBeGreaterThan(0.6)
      // Plain text still works, without provenance.
      const plain = extractInvoice(parsed.pages.join('\n\n'))
      expect(plain.amount.value).toBe(1190)
      expect(plain.amount.bbox).toBeUndefined()
    } finally {
      await tmp.cleanup()
    }
  })
})
