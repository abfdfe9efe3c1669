import sharp from 'sharp'

/** The first line of text on the warm-up page; what OCR reads back from it shows the whole path ran. */
export const WARM_UP_TEXT = 'WARM-UP Invoice 2026 Total 1,234.56'

/**
 * A one-page A4 PDF holding only a scan of four lines of text (a JPEG, no text layer): the document a parse process
 * reads at its warm start, so that the first scanned page a client sends does not pay for the path's first run
 * (pdf.js finding no text, the rasteriser, the image pipeline, the OCR engine's first recognition): measured, a
 * warm-started process spent 1.7-1.8 s of CPU on its first scanned page against 0.6-0.7 s on the next ones. Made at
 * run time, without a PDF library (those are build-time only here): five objects and their cross-reference table.
 */
export async function warmUpScanPdf(): Promise<Buffer> {
  // A whole A4 page at 300 DPI, as scanners make them: the OCR engine's memory grows to a page's size on the first
  // one it reads, and a small image left most of the first page's extra cost in place.
  const [width, height] = [2480, 3508]
  const lines = [WARM_UP_TEXT, 'Bill to: Example Customer Ltd', 'Qty 2 Widget 617.28', 'Thank you for your business']
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect width="100%" height="100%" fill="white"/>` +
    lines
      .map((l, i) => `<text x="200" y="${400 + i * 120}" font-family="sans-serif" font-size="56">${l}</text>`)
      .join('') +
    '</svg>'
  const jpeg = await sharp(Buffer.from(svg)).flatten({ background: '#ffffff' }).jpeg({ quality: 80 }).toBuffer()
  const [w, h] = [(width * 72) / 300, (height * 72) / 300] // points
  const content = `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>`,
    ),
    Buffer.concat([
      Buffer.from(
        `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB ` +
          `/BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
      ),
      jpeg,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`),
  ]
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')]
  let offset = parts[0]!.length
  const offsets: number[] = []
  for (const [i, body] of objects.entries()) {
    offsets.push(offset)
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')])
    parts.push(obj)
    offset += obj.length
  }
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`
  parts.push(Buffer.from(xref))
  return Buffer.concat(parts)
}
