import sharp from 'sharp'
import { fileLimits } from './file-limits.ts'
import type { OcrImage } from './ocr.ts'

/** A page narrower than this (px) is upscaled to it, at most MAX_UPSCALE times: receipts' small print OCRs badly. */
const MIN_WIDTH = 1400
const MAX_UPSCALE = 3
/** Skew angles tried (degrees either way) and the step between them. */
const MAX_SKEW_DEGREES = 5
const SKEW_STEP_DEGREES = 0.25
/** Smaller corrections are not worth a resampling. */
const MIN_SKEW_DEGREES = 0.3
/** Width the skew is measured at: enough for text rows, cheap to project. */
const SKEW_PROBE_WIDTH = 600
/** Adaptive threshold: a pixel is ink when darker than its neighbourhood's mean by this much (0..255). */
const THRESHOLD_OFFSET = 12
/** The neighbourhood: a Gaussian this wide relative to the page width (about two text heights on a receipt). */
const NEIGHBOURHOOD_SHARE = 0.012

/**
 * A scan prepared for tesseract: greyscale, small pages upscaled, straightened (the angle whose row projection is
 * sharpest), and binarised against each pixel's neighbourhood (adaptive thresholding), so faded thermal print and
 * uneven lighting come out as black on white. Returns a PNG.
 */
export async function prepareScan(image: OcrImage): Promise<Buffer> {
  const input = sharp(image, { limitInputPixels: fileLimits().maxImagePixels }).flatten({ background: '#ffffff' })
  const meta = await input.metadata()
  const width = meta.width ?? 0
  const scale = width > 0 && width < MIN_WIDTH ? Math.min(MAX_UPSCALE, MIN_WIDTH / width) : 1
  const grey = await input
    .greyscale()
    .resize({ width: Math.round(width * scale), kernel: 'lanczos3' })
    .png()
    .toBuffer()
  const angle = await estimateSkewDegrees(grey)
  const straight =
    Math.abs(angle) >= MIN_SKEW_DEGREES
      ? await sharp(grey).rotate(-angle, { background: '#ffffff' }).greyscale().png().toBuffer()
      : grey
  const { data, info } = await sharp(straight).greyscale().raw().toBuffer({ resolveWithObject: true })
  const sigma = Math.max(2, info.width * NEIGHBOURHOOD_SHARE)
  const mean = await sharp(data, { raw: { width: info.width, height: info.height, channels: 1 } })
    .blur(sigma)
    .raw()
    .toBuffer()
  const out = Buffer.alloc(data.length)
  for (let i = 0; i < data.length; i++) out[i] = (data[i] as number) < (mean[i] as number) - THRESHOLD_OFFSET ? 0 : 255
  return await sharp(out, { raw: { width: info.width, height: info.height, channels: 1 } })
    .png()
    .toBuffer()
}

/**
 * The page's skew in degrees (positive: text rises to the right... as sharp's rotate measures it): the angle at which
 * the dark pixels' row histogram is most uneven, i.e. text rows and the gaps between them line up.
 */
export async function estimateSkewDegrees(grey: Buffer): Promise<number> {
  const { data, info } = await sharp(grey)
    .resize({ width: SKEW_PROBE_WIDTH, withoutEnlargement: true })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true })
  const { width, height } = info
  let sum = 0
  for (const v of data) sum += v
  const cut = (sum / data.length) * 0.75
  const xs: number[] = []
  const ys: number[] = []
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if ((data[y * width + x] as number) < cut) {
        xs.push(x - width / 2)
        ys.push(y)
      }
    }
  }
  if (xs.length === 0) return 0
  let best = 0
  let bestSpread = -1
  const pad = Math.ceil(width * Math.tan((MAX_SKEW_DEGREES * Math.PI) / 180))
  const rows = new Float64Array(height + 2 * pad + 1)
  for (let deg = -MAX_SKEW_DEGREES; deg <= MAX_SKEW_DEGREES + 1e-9; deg += SKEW_STEP_DEGREES) {
    const slope = Math.tan((deg * Math.PI) / 180)
    rows.fill(0)
    for (let i = 0; i < xs.length; i++) rows[Math.round((ys[i] as number) - (xs[i] as number) * slope) + pad]! += 1
    let spread = 0
    for (const r of rows) spread += r * r
    if (spread > bestSpread) {
      bestSpread = spread
      best = deg
    }
  }
  return best
}
