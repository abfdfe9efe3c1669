/**
 * Text detection for PaddleOCR's DB (differentiable binarisation) models, without their Python code: the model turns
 * an image into a map of "text here" probabilities; this file prepares the image for it and turns the map into
 * boxes, one per run of text (a line, or a column cell of one).
 */

/** The model's input: ImageNet-normalised RGB, sides multiples of 32 (its feature pyramid halves the size 5 times). */
const SIDE_MULTIPLE = 32
const MEAN = [0.485, 0.456, 0.406] as const
const STD = [0.229, 0.224, 0.225] as const
/** A map cell belongs to text above this probability (PaddleOCR's det_db_thresh). */
export const TEXT_THRESHOLD = 0.3
/** A region is kept when its mean probability passes this (det_db_box_thresh). */
export const BOX_THRESHOLD = 0.6
/** The model predicts shrunk text kernels: a region is grown by area × ratio / perimeter (det_db_unclip_ratio). */
export const UNCLIP_RATIO = 1.5
/** Regions thinner than this (map cells) are noise. */
const MIN_SIDE = 3

/** A detected text region in pixels of the image the detector was given, with its mean text probability. */
export type TextBox = { x0: number; y0: number; x1: number; y1: number; score: number }

/** The detector's input size for an image: scaled so the longer side is at most `maxSide`, both sides rounded to 32. */
export function detectionSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height))
  const round = (n: number) => Math.max(SIDE_MULTIPLE, Math.round((n * scale) / SIDE_MULTIPLE) * SIDE_MULTIPLE)
  return { width: round(width), height: round(height) }
}

/** Interleaved RGB bytes (HWC) to the model's normalised planar tensor data (CHW). */
export function detectionTensor(rgb: Uint8Array, width: number, height: number): Float32Array {
  const plane = width * height
  const out = new Float32Array(3 * plane)
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) out[c * plane + i] = ((rgb[i * 3 + c] as number) / 255 - MEAN[c]!) / STD[c]!
  }
  return out
}

/**
 * Boxes from the probability map (`width` × `height`): connected regions above TEXT_THRESHOLD (8-neighbour), each
 * kept when the mean probability over its bounding box passes BOX_THRESHOLD, then grown back by the unclip distance,
 * as PaddleOCR's DB post-processing does for upright text (axis-aligned boxes: receipts and invoices are read level
 * or nearly; a skewed line's box is just taller). Coordinates are map cells, clamped to the map.
 */
export function boxesFromProbabilities(map: Float32Array, width: number, height: number): TextBox[] {
  const label = new Int32Array(width * height)
  const boxes: TextBox[] = []
  const stack: number[] = []
  let next = 0
  for (let start = 0; start < map.length; start++) {
    if (label[start] !== 0 || (map[start] as number) <= TEXT_THRESHOLD) continue
    next++
    label[start] = next
    stack.push(start)
    let [x0, y0, x1, y1] = [width, height, -1, -1]
    while (stack.length > 0) {
      const at = stack.pop() as number
      const x = at % width
      const y = (at - x) / width
      if (x < x0) x0 = x
      if (x > x1) x1 = x
      if (y < y0) y0 = y
      if (y > y1) y1 = y
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy
        if (ny < 0 || ny >= height) continue
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx
          if (nx < 0 || nx >= width) continue
          const n = ny * width + nx
          if (label[n] === 0 && (map[n] as number) > TEXT_THRESHOLD) {
            label[n] = next
            stack.push(n)
          }
        }
      }
    }
    const w = x1 - x0 + 1
    const h = y1 - y0 + 1
    if (Math.min(w, h) < MIN_SIDE) continue
    let sum = 0
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) sum += map[y * width + x] as number
    const score = sum / (w * h)
    if (score < BOX_THRESHOLD) continue
    const grow = (w * h * UNCLIP_RATIO) / (2 * (w + h))
    boxes.push({
      x0: Math.max(0, x0 - grow),
      y0: Math.max(0, y0 - grow),
      x1: Math.min(width, x1 + 1 + grow),
      y1: Math.min(height, y1 + 1 + grow),
      score,
    })
  }
  return boxes
}
