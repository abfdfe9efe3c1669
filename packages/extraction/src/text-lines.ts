/** A run of text on a line, separated from its neighbours by a wide gap (2+ spaces, a tab, `|`). */
export type Cell = {
  text: string
  start: number
  end: number
  column: number
  /** Horizontal extent on the page (fractions), when the text was rebuilt from positioned words. */
  x?: [number, number]
}

export type Line = { text: string; start: number; end: number; cells: Cell[] }

/** Text prepared for extraction: normalised characters, lines with absolute offsets and cells. */
export type TextDoc = { text: string; lines: Line[] }

/**
 * Normalises whitespace and look-alike characters without changing the layout that matters:
 * CRLF → LF, no-break and thin spaces → space, tabs → a column gap, full-width colons → ':'.
 */
export function normaliseText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u00a0\u2007\u2009\u202f]/g, ' ')
    .replace(/\t/g, '   ')
    .replace(/[\uff1a\ufe55]/g, ':')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\f/g, '\n')
}

const CELL_GAP = /\s{2,}|\s*\|\s*/g

/** Horizontal extent of the words between two offsets, when positions are known. */
export type XRangeOf = (start: number, end: number) => [number, number] | undefined

export function toTextDoc(raw: string, xRangeOf?: XRangeOf): TextDoc {
  const text = normaliseText(raw)
  const lines: Line[] = []
  let start = 0
  for (const lineText of text.split('\n')) {
    const end = start + lineText.length
    const cells: Cell[] = []
    let column = 0
    let cellStart = 0
    const pushCell = (from: number, to: number): void => {
      const raw = lineText.slice(from, to)
      const lead = raw.length - raw.trimStart().length
      const content = raw.trim()
      if (content) {
        const cellStart = start + from + lead
        const x = xRangeOf?.(cellStart, cellStart + content.length)
        cells.push({ text: content, start: cellStart, end: cellStart + content.length, column, ...(x ? { x } : {}) })
      }
      column++
    }
    for (const gap of lineText.matchAll(CELL_GAP)) {
      if (gap.index === 0 && gap[0].length > 0) {
        // An indented line: its first cell is not in the left column.
        column++
        cellStart = gap[0].length
        continue
      }
      pushCell(cellStart, gap.index)
      cellStart = gap.index + gap[0].length
    }
    pushCell(cellStart, lineText.length)
    lines.push({ text: lineText, start, end, cells })
    start = end + 1
  }
  return { text, lines }
}

/** Index of the line holding offset `pos` (binary search). */
export function lineIndexAt(doc: TextDoc, pos: number): number {
  let lo = 0
  let hi = doc.lines.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((doc.lines[mid] as Line).start <= pos) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** The cell of `line` that holds offset `pos`, or the last cell starting before it. */
export function cellAt(line: Line, pos: number): Cell | undefined {
  let found: Cell | undefined
  for (const cell of line.cells) if (cell.start <= pos) found = cell
  return found
}

/**
 * Trims trailing separators; a final dot stays when it ends an abbreviation ("Inc.", "S.r.l.",
 * "Co.") and goes when it ends a longer word (a sentence).
 */
export function trimTrailingPunctuation(value: string): string {
  return value
    .replace(/[\s,;:\-–—]+$/, '')
    .replace(/\.+$/, (_dot, at: number, whole: string) =>
      /(?:^|\s)(?:\p{L}{1,5}\.)*\p{L}{1,5}$/u.test(whole.slice(0, at)) ? '.' : '',
    )
    .replace(/[\s,;:\-–—]+$/, '')
}
