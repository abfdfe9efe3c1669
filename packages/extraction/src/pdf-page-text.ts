/** A positioned run of text as pdf.js reports it (TextItem). */
export type PdfTextItem = {
  str: string
  transform: number[]
  width: number
  height: number
}

type Placed = { str: string; x: number; y: number; end: number; size: number }
type Line = { y: number; size: number; items: Placed[] }

/** Separator written between runs that are far apart on one line (a table or two-column gap). */
export const COLUMN_GAP = '   '

/**
 * Rebuilds reading-order text from pdf.js text items: runs are grouped into lines by baseline,
 * ordered left to right, joined with a space where there is a visible gap and with
 * COLUMN_GAP where the gap is wide (columns), so "Total" and "120.00" never fuse into
 * "Total120.00" and label/value columns stay distinguishable.
 */
export function layoutPageText(items: readonly PdfTextItem[]): string {
  const placed: Placed[] = []
  for (const item of items) {
    if (typeof item.str !== 'string' || item.str.trim() === '') continue
    const [a = 1, b = 0, c = 0, d = 1, x = 0, y = 0] = item.transform
    const size = Math.hypot(c, d) || Math.hypot(a, b) || item.height || 10
    placed.push({ str: item.str, x, y, end: x + (item.width || size * 0.5 * item.str.length), size })
  }
  placed.sort((p, q) => q.y - p.y || p.x - q.x)

  const lines: Line[] = []
  for (const item of placed) {
    const line = lines.find((l) => Math.abs(l.y - item.y) <= 0.45 * Math.max(l.size, item.size))
    if (line) {
      line.items.push(item)
      line.size = Math.max(line.size, item.size)
    } else {
      lines.push({ y: item.y, size: item.size, items: [item] })
    }
  }
  lines.sort((p, q) => q.y - p.y)

  const out: string[] = []
  let previous: Line | undefined
  for (const line of lines) {
    if (previous && previous.y - line.y > 2.2 * Math.max(previous.size, line.size)) out.push('')
    out.push(joinLine(line))
    previous = line
  }
  return out
    .join('\n')
    .replace(/[ \t]+$/gm, '')
    .trim()
}

function joinLine(line: Line): string {
  const items = [...line.items].sort((p, q) => p.x - q.x)
  let text = ''
  let prev: Placed | undefined
  for (const item of items) {
    if (prev) {
      const gap = item.x - prev.end
      const charWidth = (prev.end - prev.x) / Math.max(1, prev.str.length)
      const spaced = /\s$/.test(prev.str) || /^\s/.test(item.str)
      if (gap > Math.max(1.2 * item.size, 3 * charWidth)) text = text.trimEnd() + COLUMN_GAP
      else if (gap > 0.12 * item.size && !spaced) text += ' '
    }
    text += item.str
    prev = item
  }
  return text
}

/** Non-whitespace character count, used to decide whether a page needs OCR. */
export function visibleCharCount(text: string): number {
  return text.replace(/\s+/g, '').length
}
