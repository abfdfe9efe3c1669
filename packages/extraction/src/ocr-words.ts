import { type LayoutWord, tidyBox } from './page-layout.ts'

/** TSV levels tesseract writes: 1 the page (its size), 5 a word. */
const PAGE_LEVEL = '1'
const WORD_LEVEL = '5'
/** Line keys: block, paragraph and line numbers packed into one group number. */
const BLOCK_SPAN = 1_000_000
const PARAGRAPH_SPAN = 1_000

/**
 * Words with boxes (page fractions) and confidences (0..1) from tesseract's TSV output
 * (`level page block par line word left top width height conf text`). Words of one OCR line
 * share a group, which the layout uses to measure a scan's skew.
 */
export function wordsFromTsv(tsv: string | null | undefined): LayoutWord[] {
  if (!tsv) return []
  let width = 0
  let height = 0
  const words: LayoutWord[] = []
  for (const row of tsv.split('\n')) {
    const cols = row.split('\t')
    if (cols.length < 12) continue
    const [level, , block, par, line, , left, top, w, h, conf] = cols.map(Number)
    const text = cols.slice(11).join('\t').trim()
    if (cols[0] === PAGE_LEVEL) {
      width = w ?? 0
      height = h ?? 0
      continue
    }
    if (cols[0] !== WORD_LEVEL || level === undefined || !text || width <= 0 || height <= 0) continue
    const x0 = (left ?? 0) / width
    const y0 = (top ?? 0) / height
    words.push({
      text,
      box: tidyBox([x0, y0, x0 + (w ?? 0) / width, y0 + (h ?? 0) / height]),
      conf: Math.max(0, Math.min(1, (conf ?? 0) / 100)),
      group: (block ?? 0) * BLOCK_SPAN + (par ?? 0) * PARAGRAPH_SPAN + (line ?? 0),
    })
  }
  return words
}
