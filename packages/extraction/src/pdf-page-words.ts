import type { LayoutWord } from './page-layout.ts'
import { tidyBox } from './page-layout.ts'
import type { PdfTextItem } from './pdf-page-text.ts'

/** The page as pdf.js shows it: its size and the map from PDF user space to it (handles /Rotate and crop boxes). */
export type PdfViewport = {
  width: number
  height: number
  convertToViewportPoint(x: number, y: number): number[]
}

/** Share of the font size above the baseline and below it, for a word's box. */
const ASCENT = 0.8
const DESCENT = 0.2

/**
 * Words with boxes (page fractions, top-left origin) from pdf.js text items. pdf.js gives one
 * item per run of text with its transform and advance width; a word's horizontal extent inside
 * the run is taken in proportion to its characters (exact for monospace, close enough otherwise
 * to tell which column and row a value sits in).
 */
export function pdfPageWords(items: readonly PdfTextItem[], viewport: PdfViewport): LayoutWord[] {
  const words: LayoutWord[] = []
  items.forEach((item, group) => {
    if (typeof item.str !== 'string' || item.str.trim() === '') return
    const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = item.transform
    const size = Math.hypot(c, d) || item.height || 10
    const run = Math.hypot(a, b) || 1
    // Unit vectors along the text and up from the baseline, in user space.
    const [ux, uy] = [a / run, b / run]
    const [vx, vy] = [-uy, ux]
    const advance = item.width || size * 0.5 * item.str.length
    const chars = item.str.length
    for (const m of item.str.matchAll(/\S+/g)) {
      const from = (advance * m.index) / chars
      const to = (advance * (m.index + m[0].length)) / chars
      const corners = [
        [from, -DESCENT * size],
        [to, -DESCENT * size],
        [from, ASCENT * size],
        [to, ASCENT * size],
      ].map(([along = 0, up = 0]) =>
        viewport.convertToViewportPoint(e + ux * along + vx * up, f + uy * along + vy * up),
      )
      const xs = corners.map((p) => (p[0] ?? 0) / viewport.width)
      const ys = corners.map((p) => (p[1] ?? 0) / viewport.height)
      words.push({
        text: m[0],
        box: tidyBox([Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]),
        group,
      })
    }
  })
  return words
}
