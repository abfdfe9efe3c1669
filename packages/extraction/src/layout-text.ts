import type { Box, LayoutWord } from './page-layout.ts'
import { normaliseText } from './text-lines.ts'

/** Where a word landed in the rebuilt text. */
export type WordSpan = { start: number; end: number; box: Box; conf?: number }

/** Separator written between words that are far apart on one row (a table or two-column gap). */
export const LAYOUT_COLUMN_GAP = '   '
/** Words on one row belong together when their centres differ by less than this share of the word height. */
const SAME_ROW_SHARE = 0.5
/** A horizontal gap wider than this many word heights is a column gap, not a space. */
const COLUMN_GAP_HEIGHTS = 1.5
/** A vertical gap wider than this many row heights becomes a blank line (a new block). */
const BLOCK_GAP_HEIGHTS = 2.2
/** Skew beyond this slope is not corrected: it is more likely a layout than a tilted scan. */
const MAX_SKEW_SLOPE = 0.15

type Placed = { word: LayoutWord; cx: number; cy: number; h: number }
type Row = { cy: number; h: number; words: Placed[] }

const median = (values: number[]): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/**
 * The page's skew as a slope (dy per dx, in page fractions) from words read as one run: a scan
 * tilted by 2° drifts a full line height across the page, which would split every row.
 */
export function estimateSkew(words: readonly LayoutWord[]): number {
  const groups = new Map<number, LayoutWord[]>()
  for (const w of words) {
    if (w.group === undefined) continue
    const list = groups.get(w.group) ?? []
    list.push(w)
    groups.set(w.group, list)
  }
  const slopes: number[] = []
  for (const list of groups.values()) {
    // A run placed on one box (an engine that boxes whole lines: every word shares its top and bottom) says nothing.
    if (list.length < 3 || list.every((w) => w.box[1] === list[0]?.box[1] && w.box[3] === list[0]?.box[3])) continue
    const xs = list.map((w) => (w.box[0] + w.box[2]) / 2)
    const ys = list.map((w) => w.box[3])
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length
    const my = ys.reduce((a, b) => a + b, 0) / ys.length
    let num = 0
    let den = 0
    xs.forEach((x, i) => {
      num += (x - mx) * ((ys[i] as number) - my)
      den += (x - mx) ** 2
    })
    if (den > 0) slopes.push(num / den)
  }
  const slope = slopes.length ? median(slopes) : pairSkew(words)
  return Math.abs(slope) <= MAX_SKEW_SLOPE ? slope : 0
}

/** Word pairs this far apart across the page (a share of its width) measure a slope; closer ones are too noisy. */
const PAIR_MIN_DX = 0.25
/** A pair's partner sits within this many word heights vertically (a tilt of under half a line). */
const PAIR_MAX_DY_HEIGHTS = 0.9

/**
 * The skew from words of different runs that face each other across the page (a till slip's item and its amount):
 * each word's nearest partner far to its right, in another run, within a line height; the median of their slopes.
 * For an engine whose runs are single boxes, which give no slope of their own.
 */
function pairSkew(words: readonly LayoutWord[]): number {
  const slopes: number[] = []
  for (const w of words) {
    const cy = (w.box[1] + w.box[3]) / 2
    const h = w.box[3] - w.box[1]
    let best: { dy: number; slope: number } | undefined
    for (const v of words) {
      if (v === w || (v.group !== undefined && v.group === w.group)) continue
      const dx = (v.box[0] + v.box[2]) / 2 - (w.box[0] + w.box[2]) / 2
      if (dx < PAIR_MIN_DX || v.box[0] <= w.box[2]) continue
      const dy = (v.box[1] + v.box[3]) / 2 - cy
      if (Math.abs(dy) > PAIR_MAX_DY_HEIGHTS * Math.max(h, v.box[3] - v.box[1])) continue
      if (!best || Math.abs(dy) < Math.abs(best.dy)) best = { dy, slope: dy / dx }
    }
    if (best) slopes.push(best.slope)
  }
  return median(slopes)
}

/** Groups words into rows (deskewed), each row left to right, rows top to bottom. */
export function layoutRows(words: readonly LayoutWord[]): Row[] {
  const skew = estimateSkew(words)
  const placed: Placed[] = words
    .filter((w) => w.text.trim() !== '')
    .map((word) => {
      const cx = (word.box[0] + word.box[2]) / 2
      return { word, cx, cy: (word.box[1] + word.box[3]) / 2 - skew * cx, h: Math.max(1e-4, word.box[3] - word.box[1]) }
    })
    .sort((a, b) => a.cy - b.cy)
  const rows: Row[] = []
  for (const p of placed) {
    // Only the last few rows can take a word: rows are built top-down.
    const row = rows
      .slice(-3)
      .find((r) => Math.abs(r.cy - p.cy) <= SAME_ROW_SHARE * Math.max(r.h, p.h) && !overlapsRow(r, p))
    if (row) {
      row.words.push(p)
      row.cy = (row.cy * (row.words.length - 1) + p.cy) / row.words.length
      row.h = Math.max(row.h, p.h)
    } else rows.push({ cy: p.cy, h: p.h, words: [p] })
  }
  for (const row of rows) row.words.sort((a, b) => a.word.box[0] - b.word.box[0])
  return rows.sort((a, b) => a.cy - b.cy)
}

function overlapsRow(row: Row, p: Placed): boolean {
  const [x0, , x1] = p.word.box
  const width = x1 - x0
  return row.words.some((q) => Math.min(x1, q.word.box[2]) - Math.max(x0, q.word.box[0]) > 0.5 * width)
}

/**
 * Text of one page rebuilt from its words: rows top to bottom, words left to right, a space
 * between neighbours and LAYOUT_COLUMN_GAP across a wide gap (so table cells and label/value
 * columns stay apart), a blank line between blocks. Returns the text and each word's span in it.
 */
export function layoutText(words: readonly LayoutWord[]): { text: string; spans: WordSpan[] } {
  const rows = layoutRows(words)
  let text = ''
  const spans: WordSpan[] = []
  let previous: Row | undefined
  for (const row of rows) {
    if (previous)
      text += previous && row.cy - previous.cy > BLOCK_GAP_HEIGHTS * Math.max(previous.h, row.h) ? '\n\n' : '\n'
    let prev: Placed | undefined
    for (const p of row.words) {
      if (prev) text += p.word.box[0] - prev.word.box[2] > COLUMN_GAP_HEIGHTS * row.h ? LAYOUT_COLUMN_GAP : ' '
      // Same length as the word, so spans stay aligned with the normalised text.
      const clean = normaliseText(p.word.text.replace(/\s+/g, ' ')).replace(/\s/g, ' ').trim()
      spans.push({ start: text.length, end: text.length + clean.length, box: p.word.box, conf: p.word.conf })
      text += clean
      prev = p
    }
    previous = row
  }
  return { text, spans }
}
