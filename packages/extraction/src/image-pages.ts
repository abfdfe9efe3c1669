import sharp from 'sharp'
import { ExtractionError } from './errors.ts'
import type { FileType } from './file-types.ts'

/** Images smaller than this (longest side, px) are upscaled 2× before OCR; small text OCRs badly. */
const UPSCALE_BELOW = 1200
/** Larger images are scaled down to this longest side before OCR. */
const MAX_OCR_SIDE = 6000

/** Frames in an image: TIFF pages; every other image type (animated GIF/WebP too) counts as 1. */
export async function countImagePages(path: string, type: FileType): Promise<number> {
  if (type !== 'tiff') return 1
  try {
    const meta = await sharp(path).metadata()
    return Math.max(1, meta.pages ?? 1)
  } catch (error) {
    throw new ExtractionError('corrupt_file', `TIFF could not be read: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * One page of an image file as an OCR-ready input: greyscale PNG on white (alpha flattened),
 * small images upscaled. BMP (which sharp cannot decode) is handed to tesseract as the file.
 * `pageIndex` is 0-based and only meaningful for multi-page TIFF.
 */
export async function imagePageForOcr(path: string, type: FileType, pageIndex = 0): Promise<string | Buffer> {
  if (type === 'bmp') return path
  try {
    const image = sharp(path, { page: type === 'tiff' ? pageIndex : 0, limitInputPixels: 300_000_000 })
    const meta = await image.metadata()
    const width = meta.width ?? 0
    const height = meta.pageHeight ?? meta.height ?? 0
    const longest = Math.max(width, height)
    let scale = 1
    let pipeline = image.flatten({ background: '#ffffff' }).greyscale()
    if (longest > 0 && longest < UPSCALE_BELOW) {
      scale = 2
      pipeline = pipeline.resize({ width: width * 2, height: height * 2, kernel: 'lanczos3' })
    } else if (longest > MAX_OCR_SIDE) {
      scale = MAX_OCR_SIDE / longest
      pipeline = pipeline.resize({ width: MAX_OCR_SIDE, height: MAX_OCR_SIDE, fit: 'inside' })
    }
    // Tesseract warns about and second-guesses images without a plausible resolution; when the
    // file has none, assume the image spans an A4 width.
    const density =
      meta.density && meta.density >= 70 ? meta.density * scale : Math.min(600, Math.max(100, (width * scale) / 8.27))
    return await pipeline.withDensity(Math.round(density)).png().toBuffer()
  } catch (error) {
    throw new ExtractionError('corrupt_file', `Image could not be read: ${(error as Error).message}`, { cause: error })
  }
}
