/**
 * Text recognition for PaddleOCR's CRNN/SVTR models (PP-OCRv4 rec), without their Python code: a detected line is
 * cut from the page and scaled to the model's height, the model gives per time step a probability per character of
 * its dictionary, and CTC greedy decoding turns that into text. Each character keeps its time step, which maps back
 * to an x position on the page: that is how a line is split into words with their own boxes.
 */
import type { TextBox } from './paddle-detect.ts'

/** The recogniser's input height (PP-OCRv4: 3 × 48 × W). */
export const REC_HEIGHT = 48
/** The narrowest input (PaddleOCR's rec_image_shape width); wider lines widen the batch. */
export const REC_MIN_WIDTH = 64
/** A line wider than this (pixels at REC_HEIGHT) is cut off: 80 characters of ordinary print. */
export const REC_MAX_WIDTH = 2400

/** A page as interleaved RGB bytes. */
export type RgbImage = { data: Uint8Array; width: number; height: number }

/** One decoded character: its dictionary text, probability and time step. */
export type DecodedChar = { text: string; prob: number; step: number }

/**
 * The line `box` (page pixels) as the recogniser's input: bilinearly scaled to REC_HEIGHT, normalised to -1..1,
 * planar (CHW), written into `out` at the row offset for a batch of `batchWidth` wide inputs (the right padding
 * stays 0, as PaddleOCR pads). Returns the width used.
 */
export function writeLineTensor(
  image: RgbImage,
  box: TextBox,
  out: Float32Array,
  offset: number,
  batchWidth: number,
): number {
  const bw = Math.max(1, box.x1 - box.x0)
  const bh = Math.max(1, box.y1 - box.y0)
  const width = Math.min(batchWidth, Math.max(1, Math.ceil((REC_HEIGHT * bw) / bh)))
  const plane = REC_HEIGHT * batchWidth
  const sx = bw / width
  const sy = bh / REC_HEIGHT
  const { data, width: iw, height: ih } = image
  for (let y = 0; y < REC_HEIGHT; y++) {
    const fy = Math.min(ih - 1, Math.max(0, box.y0 + (y + 0.5) * sy - 0.5))
    const y0 = Math.floor(fy)
    const y1 = Math.min(ih - 1, y0 + 1)
    const wy = fy - y0
    for (let x = 0; x < width; x++) {
      const fx = Math.min(iw - 1, Math.max(0, box.x0 + (x + 0.5) * sx - 0.5))
      const x0 = Math.floor(fx)
      const x1 = Math.min(iw - 1, x0 + 1)
      const wx = fx - x0
      for (let c = 0; c < 3; c++) {
        const p00 = data[(y0 * iw + x0) * 3 + c] as number
        const p01 = data[(y0 * iw + x1) * 3 + c] as number
        const p10 = data[(y1 * iw + x0) * 3 + c] as number
        const p11 = data[(y1 * iw + x1) * 3 + c] as number
        const v = (p00 * (1 - wx) + p01 * wx) * (1 - wy) + (p10 * (1 - wx) + p11 * wx) * wy
        out[offset + c * plane + y * batchWidth + x] = v / 127.5 - 1
      }
    }
  }
  return width
}

/** The width a batch of lines needs: the widest line's at REC_HEIGHT, within REC_MIN_WIDTH..REC_MAX_WIDTH. */
export function batchWidthFor(boxes: readonly TextBox[]): number {
  let widest = REC_MIN_WIDTH
  for (const b of boxes) {
    widest = Math.max(widest, Math.ceil((REC_HEIGHT * (b.x1 - b.x0)) / Math.max(1, b.y1 - b.y0)))
  }
  return Math.min(REC_MAX_WIDTH, widest)
}

/**
 * CTC greedy decoding of one line's output (`steps` × `classes` probabilities, row-major): the likeliest class per
 * step, repeats merged, blanks (class 0) dropped. Class i ≥ 1 is `dictionary[i - 1]`.
 */
export function ctcDecode(
  probs: Float32Array,
  steps: number,
  classes: number,
  dictionary: readonly string[],
): DecodedChar[] {
  const chars: DecodedChar[] = []
  let previous = -1
  for (let t = 0; t < steps; t++) {
    let best = 0
    let bestProb = -1
    const base = t * classes
    for (let k = 0; k < classes; k++) {
      const p = probs[base + k] as number
      if (p > bestProb) {
        bestProb = p
        best = k
      }
    }
    if (best !== 0 && best !== previous) chars.push({ text: dictionary[best - 1] ?? '', prob: bestProb, step: t })
    previous = best
  }
  return chars
}

/** A word of a recognised line: text, box in page pixels, mean character probability. */
export type LineWord = { text: string; x0: number; y0: number; x1: number; y1: number; conf: number }

/** A blank column run at least this share of the line's input height wide is a space between words. */
export const SPACE_GAP_SHARE = 0.33
/** Between two digits it must be wider: a narrow 1 leaves wide blank columns inside `2018`. */
export const DIGIT_GAP_SHARE = 0.5

/** A blank run between ink: its centre in input pixels (or time steps, once converted), its width in line heights. */
export type Gap = { at: number; width: number }
/** A column is blank when no pixel of its middle band is darker than the line's midpoint between ink and paper. */
const INK_BAND = [0.15, 0.85] as const

/**
 * Centres (input pixels) of the blank column runs in a line's input wide enough to be spaces. The model itself
 * writes few spaces (its dictionary is mostly Chinese, which has none), so words are also split where the image
 * shows a gap.
 */
export function spaceGaps(tensor: Float32Array, offset: number, batchWidth: number, width: number): Gap[] {
  const plane = REC_HEIGHT * batchWidth
  const [top, bottom] = [Math.floor(REC_HEIGHT * INK_BAND[0]), Math.ceil(REC_HEIGHT * INK_BAND[1])]
  let lo = Number.POSITIVE_INFINITY
  let hi = Number.NEGATIVE_INFINITY
  const grey = (x: number, y: number) =>
    ((tensor[offset + y * batchWidth + x] as number) +
      (tensor[offset + plane + y * batchWidth + x] as number) +
      (tensor[offset + 2 * plane + y * batchWidth + x] as number)) /
    3
  for (let y = top; y < bottom; y++) {
    for (let x = 0; x < width; x++) {
      const v = grey(x, y)
      if (v < lo) lo = v
      if (v > hi) hi = v
    }
  }
  const cut = (lo + hi) / 2
  const minGap = REC_HEIGHT * SPACE_GAP_SHARE
  const gaps: Gap[] = []
  let runStart = -1
  let seenInk = false
  for (let x = 0; x <= width; x++) {
    let ink = x === width
    for (let y = top; !ink && y < bottom; y++) ink = grey(x, y) < cut
    if (!ink && runStart < 0) runStart = x
    if (ink) {
      // Only gaps between ink count: the margins before the first and after the last character are no spaces.
      if (runStart >= 0 && seenInk && x < width && x - runStart >= minGap) {
        gaps.push({ at: (runStart + x) / 2, width: (x - runStart) / REC_HEIGHT })
      }
      runStart = -1
      seenInk = true
    }
  }
  return gaps
}

/** Narrow punctuation leaves wide blank columns beside it: `80 .90`, `Total :` are one word each, not two. */
const NO_BREAK_BEFORE = /^[.,:;)%!]$/
const NO_BREAK_AFTER = /^[.,(/-]$/
const DIGIT = /^\d$/

/**
 * Splits a decoded line into words at spaces, and where a gap (`gaps`, centred in time steps) lies between two
 * characters.
 * Each word spans from its first to its last character's time step (a step covers `stepWidth` page pixels from the
 * box's left edge), so the extractor can point at the word itself rather than the whole line.
 */
export function lineWords(
  chars: readonly DecodedChar[],
  box: TextBox,
  stepWidth: number,
  gaps: readonly Gap[] = [],
): LineWord[] {
  const words: LineWord[] = []
  let current: DecodedChar[] = []
  const flush = () => {
    if (current.length === 0) return
    const first = current[0] as DecodedChar
    const last = current[current.length - 1] as DecodedChar
    words.push({
      text: current.map((c) => c.text).join(''),
      x0: Math.max(box.x0, box.x0 + first.step * stepWidth),
      x1: Math.min(box.x1, box.x0 + (last.step + 1) * stepWidth),
      y0: box.y0,
      y1: box.y1,
      conf: current.reduce((sum, c) => sum + c.prob, 0) / current.length,
    })
    current = []
  }
  let previous: DecodedChar | undefined
  for (const c of chars) {
    if (c.text.trim() === '') flush()
    else {
      if (previous && !NO_BREAK_BEFORE.test(c.text) && !NO_BREAK_AFTER.test(previous.text)) {
        const after = previous.step + 0.5
        const digits = DIGIT.test(previous.text) && DIGIT.test(c.text)
        if (gaps.some((g) => g.at > after && g.at < c.step + 0.5 && (!digits || g.width >= DIGIT_GAP_SHARE))) flush()
      }
      current.push(c)
    }
    previous = c
  }
  flush()
  return words
}
