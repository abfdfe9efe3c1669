/**
 * Real fixture files for the extraction tests, generated with real libraries:
 * pdf-lib (PDFs), sharp rendering SVG text with DejaVu Sans (PNG/JPEG/TIFF/GIF/WebP), a tiny
 * BMP encoder (sharp cannot write BMP), the `docx` package (DOCX) and a stored-ZIP writer for a
 * DOCX that carries docProps/app.xml <Pages>.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { Document, Packer, Paragraph } from 'docx'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import sharp from 'sharp'

export const FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'
export const FONT_AVAILABLE = existsSync(FONT_FILE)

export async function makeTempDir(): Promise<{
  dir: string
  file: (name: string) => string
  cleanup: () => Promise<void>
}> {
  const dir = await mkdtemp(join(tmpdir(), 'quire-extraction-test-'))
  return { dir, file: (name) => join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) }
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** Black text lines on white, rendered by sharp (librsvg) with DejaVu Sans. */
export async function renderTextPng(
  lines: string[],
  options: { width?: number; fontSize?: number; lineHeight?: number } = {},
): Promise<Buffer> {
  const fontSize = options.fontSize ?? 28
  const lineHeight = options.lineHeight ?? Math.round(fontSize * 1.6)
  const width = options.width ?? 1100
  const height = lineHeight * (lines.length + 1)
  const body = lines
    .map((line, i) => `<text x="40" y="${lineHeight * (i + 1)}" xml:space="preserve">${escapeXml(line)}</text>`)
    .join('')
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect width="100%" height="100%" fill="#ffffff"/>` +
    `<g font-family="DejaVu Sans" font-size="${fontSize}" fill="#000000">${body}</g></svg>`
  return sharp(Buffer.from(svg)).png().toBuffer()
}

/** A text PDF, one entry per page, each page a list of lines (Helvetica 12pt, A4). */
export async function makeTextPdf(pages: string[][]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (const lines of pages) {
    const page = pdf.addPage([595, 842])
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 12, font }))
  }
  return pdf.save()
}

/** A PDF with label/value pairs drawn in two columns (separate text runs far apart). */
export async function makeTwoColumnPdf(rows: [string, string][]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  const page = pdf.addPage([595, 842])
  rows.forEach(([label, value], i) => {
    page.drawText(label, { x: 50, y: 780 - i * 20, size: 11, font })
    page.drawText(value, { x: 330, y: 780 - i * 20, size: 11, font })
  })
  return pdf.save()
}

/** An image-only PDF: each PNG becomes one page, no text layer. */
export async function makeImagePdf(pngs: Buffer[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  for (const png of pngs) {
    const image = await pdf.embedPng(png)
    const width = 595
    const height = (image.height / image.width) * width
    const page = pdf.addPage([width, height])
    page.drawImage(image, { x: 0, y: 0, width, height })
  }
  return pdf.save()
}

/** A multi-page TIFF, one page per PNG (all the same size). */
export async function makeMultiPageTiff(pngs: Buffer[]): Promise<Buffer> {
  return sharp(pngs, { join: { animated: true } })
    .tiff({ compression: 'lzw' })
    .toBuffer()
}

/** An uncompressed 24-bit BMP (sharp cannot write BMP). */
export async function makeBmp(png: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(png)
    .flatten({ background: '#ffffff' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  const { width, height, channels } = info
  const rowSize = Math.ceil((width * 3) / 4) * 4
  const pixelBytes = rowSize * height
  const bmp = Buffer.alloc(54 + pixelBytes)
  bmp.write('BM', 0, 'ascii')
  bmp.writeUInt32LE(54 + pixelBytes, 2)
  bmp.writeUInt32LE(54, 10)
  bmp.writeUInt32LE(40, 14)
  bmp.writeInt32LE(width, 18)
  bmp.writeInt32LE(height, 22)
  bmp.writeUInt16LE(1, 26)
  bmp.writeUInt16LE(24, 28)
  bmp.writeUInt32LE(pixelBytes, 34)
  bmp.writeInt32LE(2835, 38)
  bmp.writeInt32LE(2835, 42)
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * rowSize
    for (let x = 0; x < width; x++) {
      const src = (y * width + x) * channels
      const r = data[src] ?? 255
      const g = data[src + (channels > 1 ? 1 : 0)] ?? r
      const b = data[src + (channels > 2 ? 2 : 0)] ?? r
      bmp[row + x * 3] = b
      bmp[row + x * 3 + 1] = g
      bmp[row + x * 3 + 2] = r
    }
  }
  return bmp
}

/** A DOCX made by the `docx` package (no <Pages> in docProps/app.xml). */
export async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph(p)) }] })
  return Packer.toBuffer(doc)
}

/** A minimal DOCX written entry by entry, with docProps/app.xml declaring `pages`. */
export function makeDocxWithStoredPages(paragraphs: string[], pages: number): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${escapeXml(p)}</w:t></w:r></w:p>`).join('')
  return makeStoredZip([
    [
      '[Content_Types].xml',
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
        '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>',
    ],
    [
      '_rels/.rels',
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/></Relationships>',
    ],
    [
      'word/document.xml',
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
        `<w:body>${body}</w:body></w:document>`,
    ],
    [
      'docProps/app.xml',
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">' +
        `<Application>Microsoft Office Word</Application><Pages>${pages}</Pages><Words>10</Words></Properties>`,
    ],
  ])
}

function makeStoredZip(entries: [string, string][]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, content] of entries) {
    const nameBytes = Buffer.from(name, 'utf8')
    const data = Buffer.from(content, 'utf8')
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(nameBytes.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, nameBytes, data)
    centrals.push(central, nameBytes)
    offset += 30 + nameBytes.length + data.length
  }
  const centralBuffer = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(centralBuffer.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, centralBuffer, end])
}

export async function writeFixture(path: string, data: Uint8Array | Buffer | string): Promise<string> {
  await writeFile(path, data)
  return path
}
