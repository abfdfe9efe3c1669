import { AlignmentType, Document, Packer, Paragraph, TabStopType, TextRun } from 'docx'
import { PDFDocument, type PDFFont, StandardFonts } from 'pdf-lib'
import sharp from 'sharp'
import type { PageModel, Placed } from './corpus-layouts.ts'
import type { Rand } from './corpus-spec.ts'

const PDF_FONTS = {
  sans: [StandardFonts.Helvetica, StandardFonts.HelveticaBold],
  serif: [StandardFonts.TimesRoman, StandardFonts.TimesRomanBold],
  mono: [StandardFonts.Courier, StandardFonts.CourierBold],
} as const
/** Table rules in scans: the light grey most invoice tools print (black rules make tesseract drop the whole table). */
const RULE_INK = '#a8a8a8'
const SVG_FONTS = { sans: 'DejaVu Sans', serif: 'DejaVu Serif', mono: 'DejaVu Sans Mono' } as const

/** A text PDF (pdf-lib, standard fonts): real text layer, positions as laid out. */
export async function renderPdf(page: PageModel): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const [regular, bold] = await Promise.all(PDF_FONTS[page.font].map((f) => pdf.embedFont(f)))
  const p = pdf.addPage([page.width, page.height])
  for (const item of page.items) {
    const font = (item.bold ? bold : regular) as PDFFont
    const width = font.widthOfTextAtSize(item.text, item.size)
    p.drawText(item.text, { x: item.right ? item.x - width : item.x, y: page.height - item.y, size: item.size, font })
  }
  for (const r of page.rules ?? [])
    p.drawLine({ start: { x: r.x0, y: page.height - r.y0 }, end: { x: r.x1, y: page.height - r.y1 }, thickness: 0.6 })
  return pdf.save()
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function svgOf(page: PageModel, scale: number, ink: string): string {
  const text = page.items
    .map(
      (i: Placed) =>
        `<text x="${i.x * scale}" y="${i.y * scale}" font-size="${i.size * scale}"${i.bold ? ' font-weight="bold"' : ''}` +
        `${i.right ? ' text-anchor="end"' : ''} xml:space="preserve">${escapeXml(i.text)}</text>`,
    )
    .join('')
  const rules = (page.rules ?? [])
    .map(
      (r) =>
        `<line x1="${r.x0 * scale}" y1="${r.y0 * scale}" x2="${r.x1 * scale}" y2="${r.y1 * scale}" stroke="${RULE_INK}" stroke-width="${0.5 * scale}"/>`,
    )
    .join('')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${page.width * scale}" height="${page.height * scale}">` +
    `<rect width="100%" height="100%" fill="#ffffff"/>${rules}<g font-family="${SVG_FONTS[page.font]}" fill="${ink}">${text}</g></svg>`
  )
}

export type ScanOptions = {
  scale: number
  angle: number
  noise: number
  blur: number
  jpeg: number | null
  faded: boolean
}

/** Random scan/photo degradations for one document. */
export function scanOptions(r: Rand, receipt: boolean): ScanOptions {
  return {
    scale: receipt ? 3.6 : 2.4,
    angle: (r() - 0.5) * (receipt ? 5 : 3),
    noise: 10 + r() * 30,
    blur: r() < 0.4 ? 0.4 + r() * 0.5 : 0,
    jpeg: r() < 0.6 ? Math.round(40 + r() * 40) : null,
    faded: receipt && r() < 0.7,
  }
}

/** A scanned or photographed page: rendered text, tilted, with noise, blur, fading and JPEG artefacts. */
export async function renderImage(page: PageModel, r: Rand, o: ScanOptions): Promise<Buffer> {
  const ink = o.faded ? '#5a5a5a' : '#111111'
  let img = sharp(Buffer.from(svgOf(page, o.scale, ink))).flatten({ background: '#ffffff' })
  const base = await img.rotate(o.angle, { background: '#f4f2ee' }).raw().toBuffer({ resolveWithObject: true })
  const { width, height, channels } = base.info
  const data = base.data
  for (let i = 0; i < data.length; i += channels) {
    const n = (r() - 0.5) * o.noise
    for (let c = 0; c < Math.min(3, channels); c++) data[i + c] = Math.max(0, Math.min(255, (data[i + c] ?? 0) + n))
  }
  img = sharp(data, { raw: { width, height, channels } })
  if (o.blur > 0) img = img.blur(0.3 + o.blur)
  return o.jpeg ? img.jpeg({ quality: o.jpeg }).toBuffer() : img.png().toBuffer()
}

/** An image-only PDF: the scan embedded as the page (so parsing has to OCR it). */
export async function renderScannedPdf(image: Buffer, page: PageModel): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const isJpeg = image[0] === 0xff && image[1] === 0xd8
  const embedded = isJpeg ? await pdf.embedJpg(image) : await pdf.embedPng(image)
  const p = pdf.addPage([page.width, page.height])
  p.drawImage(embedded, { x: 0, y: 0, width: page.width, height: page.height })
  return pdf.save()
}

/** A DOCX: each visual row one paragraph, its pieces at tab stops where they sat on the page. */
export async function renderDocx(page: PageModel): Promise<Buffer> {
  const rows = new Map<number, Placed[]>()
  for (const item of page.items) rows.set(item.y, [...(rows.get(item.y) ?? []), item])
  const paragraphs = [...rows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, items]) => {
      const sorted = items.sort((a, b) => a.x - b.x)
      const runs: TextRun[] = []
      sorted.forEach((item, i) => {
        if (i > 0 || item.x > 120) runs.push(new TextRun({ text: '\t' }))
        runs.push(new TextRun({ text: item.text, bold: item.bold, size: Math.round(item.size * 2) }))
      })
      return new Paragraph({
        children: runs,
        tabStops: [
          { type: TabStopType.LEFT, position: 3600 },
          { type: TabStopType.LEFT, position: 6000 },
          { type: TabStopType.RIGHT, position: 9000 },
        ],
        alignment: AlignmentType.LEFT,
      })
    })
  return Packer.toBuffer(new Document({ sections: [{ children: paragraphs }] }))
}
