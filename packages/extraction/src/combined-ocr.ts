import sharp from 'sharp'
import { layoutText } from './layout-text.ts'
import type { OcrEngine, OcrImage, OcrResult, RecognizeOptions } from './ocr.ts'
import { type Box, type LayoutWord, unionBox } from './page-layout.ts'
import type { PaddleOcrEngine } from './paddle-ocr.ts'

/** A line holding a figure (an amount, a date, a time) is read twice when its least sure word is below this. */
export const LINE_DOUBT = 0.9
/** A page whose mean word confidence is below this is read again whole by the second engine. */
export const PAGE_DOUBT = 0.7
/** Margins added around a doubted line before it is read again (share of its height; share of the page width). */
const LINE_MARGIN_HEIGHTS = 0.25
const LINE_MARGIN_WIDTH = 0.01
/** Figures the extractor reads: digits, possibly with separators. */
const FIGURE = /\d/

/**
 * Tesseract first (fast), PaddleOCR where tesseract doubts: lines with a figure and an unsure word are read again by
 * Paddle's recogniser over the same region, and each unsure figure takes Paddle's reading of the same word when
 * Paddle is surer of it; a page tesseract barely read (low mean confidence) is read again whole. Word boxes keep
 * their provenance either way.
 */
export function createCombinedOcrEngine(first: OcrEngine, second: PaddleOcrEngine): OcrEngine {
  return {
    workers: first.workers,
    async start() {
      await Promise.all([first.start(), second.start()])
    },
    async close() {
      await Promise.all([first.close(), second.close()])
    },
    async recognize(image: OcrImage, options?: RecognizeOptions): Promise<OcrResult> {
      const initial = await first.recognize(image, options)
      const words = initial.words ?? []
      // Paddle reads through sharp: what it cannot decode (a BMP path) keeps tesseract's reading.
      if (typeof image === 'string' && !(await sharpReads(image))) return initial
      if (words.length === 0 || initial.confidence < PAGE_DOUBT) {
        const again = await second.recognize(image)
        return again.confidence > initial.confidence ? again : initial
      }
      return await rereadDoubtedLines(image, initial, words, second)
    },
  }
}

async function rereadDoubtedLines(
  image: OcrImage,
  initial: OcrResult,
  words: LayoutWord[],
  second: PaddleOcrEngine,
): Promise<OcrResult> {
  const lines = new Map<number, LayoutWord[]>()
  words.forEach((w, i) => {
    const key = w.group ?? -1 - i
    lines.set(key, [...(lines.get(key) ?? []), w])
  })
  const doubted = [...lines.entries()].filter(
    ([, line]) => line.some((w) => FIGURE.test(w.text)) && Math.min(...line.map((w) => w.conf ?? 0)) < LINE_DOUBT,
  )
  if (doubted.length === 0) return initial
  const regions: Box[] = doubted.map(([, line]) => {
    const [x0, y0, x1, y1] = unionBox(line.map((w) => w.box)) as Box
    const dy = (y1 - y0) * LINE_MARGIN_HEIGHTS
    return [
      Math.max(0, x0 - LINE_MARGIN_WIDTH),
      Math.max(0, y0 - dy),
      Math.min(1, x1 + LINE_MARGIN_WIDTH),
      Math.min(1, y1 + dy),
    ]
  })
  const readings = await second.recognizeRegions(image, regions)
  const replaced = new Map<LayoutWord, LayoutWord>()
  doubted.forEach(([, line], i) => {
    const reading = readings[i]?.words ?? []
    for (const word of line) {
      if (!FIGURE.test(word.text) || (word.conf ?? 0) >= LINE_DOUBT) continue
      const better = matchingWord(word, reading)
      if (better && FIGURE.test(better.text) && (better.conf ?? 0) > (word.conf ?? 0)) {
        replaced.set(word, { ...word, text: better.text, conf: better.conf })
      }
    }
  })
  if (replaced.size === 0) return initial
  const merged = words.map((w) => replaced.get(w) ?? w)
  const confidence = merged.reduce((s, w) => s + (w.conf ?? 0), 0) / merged.length
  return { text: layoutText(merged).text, words: merged, confidence }
}

/** Words are the same when they overlap this much (intersection over union of their horizontal extents). */
const SAME_WORD_OVERLAP = 0.6

/**
 * The second reading's word at the same place as `word`: exactly one whose horizontal extent overlaps it by
 * SAME_WORD_OVERLAP. Tesseract's word boundaries are kept (it spaces words better than Paddle, whose dictionary has
 * few spaces); Paddle supplies the characters (it reads faded digits better).
 */
function matchingWord(word: LayoutWord, candidates: readonly LayoutWord[]): LayoutWord | undefined {
  const overlapping = candidates.filter((c) => {
    const inter = Math.min(word.box[2], c.box[2]) - Math.max(word.box[0], c.box[0])
    const union = Math.max(word.box[2], c.box[2]) - Math.min(word.box[0], c.box[0])
    return inter > 0 && inter / union >= SAME_WORD_OVERLAP
  })
  return overlapping.length === 1 ? overlapping[0] : undefined
}

async function sharpReads(path: string): Promise<boolean> {
  try {
    await sharp(path).metadata()
    return true
  } catch {
    return false
  }
}
