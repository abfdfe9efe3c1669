import { layoutText, type WordSpan } from './layout-text.ts'
import { type Box, type PageLayout, tidyBox, unionBox } from './page-layout.ts'
import { normaliseText } from './text-lines.ts'

/** A document as the extractors take it: its pages' text and, where known, their words with positions. */
export type DocumentInput = {
  /** Text of each page. */
  pages: readonly string[]
  /** Words with positions per page (index-aligned with `pages`); a page without one is read from its text. */
  layouts?: ReadonlyArray<PageLayout | null | undefined>
  /** The 1-based number of each page in its file (a split document starts mid-file). Default 1, 2, ... */
  pageNumbers?: readonly number[]
}

/** Where a value was read: the page (1-based) and, when positions are known, its box in page fractions. */
export type Provenance = { page?: number; bbox?: Box; ocrConf?: number }

/** The text the extractors read, and the way back from an offset in it to a page and a box. */
export type DocumentSource = {
  text: string
  locate(start: number, end: number): Provenance
  /** Horizontal extent (page fractions) of the words between two offsets, when positions are known. */
  xRange(start: number, end: number): [number, number] | undefined
}

type PageRange = { start: number; end: number; page: number; spans: WordSpan[] }

const PAGE_BREAK = '\n\n'

/** Plain text (no pages known, no positions): offsets map to nothing. */
export function textSource(text: string): DocumentSource {
  return { text: normaliseText(text), locate: () => ({}), xRange: () => undefined }
}

/**
 * Joins a document's pages into one text for the extractors. A page with words is rebuilt from
 * them (rows and columns by position); a page without keeps its text. Every offset remembers its
 * page, and offsets inside rebuilt pages their word boxes.
 */
export function documentSource(input: DocumentInput): DocumentSource {
  const ranges: PageRange[] = []
  let text = ''
  input.pages.forEach((pageText, i) => {
    const layout = input.layouts?.[i]
    const page = input.pageNumbers?.[i] ?? layout?.page ?? i + 1
    if (i > 0) text += PAGE_BREAK
    const rebuilt = layout && layout.words.length > 0 ? layoutText(layout.words) : null
    const body = rebuilt ? rebuilt.text : normaliseText(pageText)
    const start = text.length
    text += body
    const spans = (rebuilt?.spans ?? []).map((s) => ({ ...s, start: s.start + start, end: s.end + start }))
    ranges.push({ start, end: text.length, page, spans })
  })
  const spansIn = (start: number, end: number): { range?: PageRange; hit: WordSpan[] } => {
    const range = ranges.find((r) => start >= r.start && start <= r.end)
    return { range, hit: range?.spans.filter((s) => s.start < Math.max(end, start + 1) && s.end > start) ?? [] }
  }
  return {
    text,
    xRange(start, end) {
      const { hit } = spansIn(start, end)
      if (hit.length === 0) return undefined
      return [Math.min(...hit.map((s) => s.box[0])), Math.max(...hit.map((s) => s.box[2]))]
    },
    locate(start, end) {
      const { range, hit } = spansIn(start, end)
      if (!range) return {}
      const bbox = unionBox(hit.map((s) => s.box))
      const confs = hit.map((s) => s.conf).filter((c): c is number => c !== undefined)
      return {
        page: range.page,
        ...(bbox ? { bbox: tidyBox(bbox) } : {}),
        ...(confs.length ? { ocrConf: Math.min(...confs) } : {}),
      }
    },
  }
}
