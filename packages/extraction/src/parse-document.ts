import { pagesForTextLength, readDocxText } from './docx.ts'
import type { FileType } from './file-types.ts'
import { countImagePages, imagePageForOcr } from './image-pages.ts'
import { createOcrEngine } from './create-ocr-engine.ts'
import type { DocumentLanguage } from './detect-language.ts'
import type { OcrEngine, RecognizeOptions } from './ocr.ts'
import { paginateText } from './paginate-text.ts'
import type { PageLayout } from './page-layout.ts'
import { openPdf, type PdfDocument } from './pdf-document.ts'
import { pdfPageWords } from './pdf-page-words.ts'
import { layoutPageText, visibleCharCount, type PdfTextItem } from './pdf-page-text.ts'
import { rasterisePdfPage, resolveRasteriser, type RasteriserChoice } from './rasterise-pdf-page.ts'

export type ParsedDocument = {
  /** Text of each page, in order. */
  pages: string[]
  /** 1-based numbers of the pages whose text came from OCR. */
  ocrPages: number[]
  /** Words with positions per page (index-aligned with `pages`); null where unknown (DOCX). */
  layouts: Array<PageLayout | null>
  /**
   * A second OCR engine's reading (the `fused` engine), index-aligned with `pages`: a scanned page's second reading,
   * else the page as above. Absent when no page was read twice.
   */
  second?: { pages: string[]; layouts: Array<PageLayout | null> }
}

export type ParseOptions = {
  /** Reused OCR engine. Without one, a temporary engine is started and closed for this call. */
  ocr?: OcrEngine
  /** How PDF pages are rendered for OCR. 'auto' (default): pdftoppm when on PATH, else pdf.js. */
  rasteriser?: RasteriserChoice
  /** Render resolution for OCR of PDF pages. Default 300. */
  dpi?: number
  /** A PDF page with fewer visible (non-space) characters than this is OCR'd. Default 20. */
  minTextChars?: number
  /**
   * The languages the document is written in (a pipeline's `languages`): OCR reads with their models. Absent: OCR
   * reads in English and reads again in the language the text turns out to be in.
   */
  languages?: readonly DocumentLanguage[]
}

const DEFAULT_MIN_TEXT_CHARS = 20

/**
 * Text per page.
 * - PDF: the text layer of each page (layout-aware line reconstruction); a page with (almost) no
 *   text is rendered and OCR'd, and the OCR text is kept when it is longer than the text layer.
 * - DOCX: mammoth's raw text, split at line breaks into pages of about 3,000 characters (1 per
 *   started 3,000, at least 1; Word's stored <Pages> is not used here, as text cannot be placed on it).
 * - Images: OCR of each page (TIFF frames one by one).
 */
export async function parseDocument(path: string, type: FileType, opts: ParseOptions = {}): Promise<ParsedDocument> {
  if (type === 'docx') return parseDocx(path)
  const owned = opts.ocr ? undefined : createOcrEngine()
  const ocr = opts.ocr ?? (owned as OcrEngine)
  try {
    return type === 'pdf' ? await parsePdf(path, ocr, opts) : await parseImage(path, type, ocr, recognizeOptions(opts))
  } finally {
    await owned?.close()
  }
}

async function parseDocx(path: string): Promise<ParsedDocument> {
  const text = await readDocxText(path)
  const pages = paginateText(text, pagesForTextLength(text.length))
  return { pages, ocrPages: [], layouts: pages.map(() => null) }
}

function recognizeOptions(opts: ParseOptions): RecognizeOptions {
  return opts.languages?.length ? { languages: opts.languages } : {}
}

async function parseImage(
  path: string,
  type: FileType,
  ocr: OcrEngine,
  options: RecognizeOptions,
): Promise<ParsedDocument> {
  const count = await countImagePages(path, type)
  const results = await mapWithConcurrency(count, ocr.workers, async (i) => {
    const input = await imagePageForOcr(path, type, i)
    return ocr.recognize(input, options)
  })
  return {
    pages: results.map((r) => r.text),
    ocrPages: results.map((_, i) => i + 1),
    layouts: results.map((r, i) => ({ page: i + 1, words: r.words ?? [] })),
    ...secondReading(
      results.map((r) => r.text),
      results.map((r, i) => ({ page: i + 1, words: r.words ?? [] })),
      results.map((r, i) => (r.second ? { index: i, ...r.second } : null)),
    ),
  }
}

/**
 * A PDF's text layer, page by page, as parseDocument reads it, when every page has text: null when a page has too
 * little text and would need OCR (then parseDocument does the whole job). No canvas, no OCR engine: for a small
 * text PDF this is the whole of parseDocument's work, cheap enough to run on the caller's thread.
 */
export async function parsePdfTextLayer(
  path: string,
  opts: Pick<ParseOptions, 'minTextChars'> = {},
): Promise<ParsedDocument | null> {
  const doc = await openPdf(path)
  try {
    const { pages, layouts, needOcr } = await pdfTextLayer(doc, opts.minTextChars ?? DEFAULT_MIN_TEXT_CHARS)
    return needOcr.length > 0 ? null : { pages, ocrPages: [], layouts }
  } finally {
    await doc.destroy()
  }
}

async function pdfTextLayer(doc: PdfDocument, minChars: number) {
  const pages: string[] = []
  const layouts: Array<PageLayout | null> = []
  const needOcr: number[] = []
  for (let n = 1; n <= doc.numPages; n++) {
    const { text, layout } = await pageText(doc, n)
    pages.push(text)
    layouts.push(layout)
    // pdf.js keeps parsed pages and fonts cached; release them now and then on long documents.
    if (n % 50 === 0) await doc.cleanup()
    if (visibleCharCount(text) < minChars) needOcr.push(n)
  }
  return { pages, layouts, needOcr }
}

async function parsePdf(path: string, ocr: OcrEngine, opts: ParseOptions): Promise<ParsedDocument> {
  const minChars = opts.minTextChars ?? DEFAULT_MIN_TEXT_CHARS
  const doc = await openPdf(path, { withCanvas: true })
  try {
    const { pages, layouts, needOcr } = await pdfTextLayer(doc, minChars)
    const ocrPages: number[] = []
    if (needOcr.length > 0) {
      const rasteriser = await resolveRasteriser(opts.rasteriser)
      const results = await mapWithConcurrency(needOcr.length, ocr.workers, async (i) => {
        const pageNumber = needOcr[i] as number
        const image = await rasterisePdfPage({ path, doc, pageNumber, rasteriser, dpi: opts.dpi })
        return ocr.recognize(image, recognizeOptions(opts))
      })
      const seconds: Array<SecondPage | null> = []
      results.forEach(({ text, words, second }, i) => {
        const pageNumber = needOcr[i] as number
        if (visibleCharCount(text) > visibleCharCount(pages[pageNumber - 1] ?? '')) {
          pages[pageNumber - 1] = text
          layouts[pageNumber - 1] = { page: pageNumber, words: words ?? [] }
          ocrPages.push(pageNumber)
          if (second) seconds.push({ index: pageNumber - 1, ...second })
        }
      })
      return { pages, ocrPages, layouts, ...secondReading(pages, layouts, seconds) }
    }
    return { pages, ocrPages, layouts }
  } finally {
    await doc.destroy()
  }
}

type SecondPage = { index: number; text: string; words?: PageLayout['words'] }

/** The document's second reading: its pages as read, with the pages a second engine read replaced by that reading. */
function secondReading(
  pages: readonly string[],
  layouts: ReadonlyArray<PageLayout | null>,
  seconds: ReadonlyArray<SecondPage | null>,
): Pick<ParsedDocument, 'second'> {
  const read = seconds.filter((s): s is SecondPage => s !== null)
  if (read.length === 0) return {}
  const second = { pages: [...pages], layouts: [...layouts] }
  for (const s of read) {
    second.pages[s.index] = s.text
    second.layouts[s.index] = { page: layouts[s.index]?.page ?? s.index + 1, words: s.words ?? [] }
  }
  return { second }
}

async function pageText(doc: PdfDocument, pageNumber: number): Promise<{ text: string; layout: PageLayout }> {
  const page = await doc.getPage(pageNumber)
  try {
    const content = await page.getTextContent()
    const items = content.items.filter((item): item is typeof item & PdfTextItem => 'str' in item)
    const words = pdfPageWords(items, page.getViewport({ scale: 1 }))
    return { text: layoutPageText(items), layout: { page: pageNumber, words } }
  } finally {
    page.cleanup()
  }
}

/** Runs fn(0..count-1) with at most `limit` in flight; results in index order. */
async function mapWithConcurrency<T>(count: number, limit: number, fn: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count)
  let next = 0
  const run = async (): Promise<void> => {
    while (next < count) {
      const index = next++
      results[index] = await fn(index)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, run))
  return results
}
