import { open } from 'node:fs/promises'
import sharp from 'sharp'
import { ExtractionError } from './errors.ts'
import { fileLimits, megapixels } from './file-limits.ts'
import type { FileType } from './file-types.ts'

/** Images smaller than this (longest side, px) are upscaled 2× before OCR; small text OCRs badly. */
const UPSCALE_BELOW = 1200
/** Larger images are scaled down to this longest side before OCR. */
const MAX_OCR_SIDE = 6000

/** Frames in an image: TIFF pages; every other image type (animated GIF/WebP too) counts as 1. */
export async function countImagePages(path: string, type: FileType): Promise<number> {
  if (type !== 'tiff') return 1
  try {
    // The header only (the IFD chain): no page is decoded.
    const meta = await sharp(path, { limitInputPixels: fileLimits().maxImagePixels }).metadata()
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
  const { maxImagePixels } = fileLimits()
  if (type === 'bmp') {
    await checkBmpPixels(path)
    return path
  }
  try {
    const image = sharp(path, { page: type === 'tiff' ? pageIndex : 0, limitInputPixels: maxImagePixels })
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
    if (isPixelLimitError(error)) {
      throw new ExtractionError('too_large', `Image has more than ${megapixels(maxImagePixels)}`, { cause: error })
    }
    throw new ExtractionError('corrupt_file', `Image could not be read: ${(error as Error).message}`, { cause: error })
  }
}

/** sharp refused an image for `limitInputPixels` ("Input image exceeds pixel limit"), before decoding it. */
export function isPixelLimitError(error: unknown): boolean {
  return /pixel limit/i.test((error as Error)?.message ?? '')
}

/**
 * A BMP (which sharp cannot decode; tesseract reads it whole) held to the pixel limit from its header: with RLE
 * compression a small file can declare any size. Throws ExtractionError `too_large`, or `corrupt_file` when the
 * header is not a BMP's.
 */
export async function checkBmpPixels(path: string): Promise<void> {
  const handle = await open(path, 'r')
  const head = Buffer.alloc(26)
  try {
    await handle.read(head, 0, head.length, 0)
  } finally {
    await handle.close()
  }
  if (head.toString('latin1', 0, 2) !== 'BM') throw new ExtractionError('corrupt_file', 'BMP header is damaged')
  const dibSize = head.readUInt32LE(14)
  // BITMAPCOREHEADER (12 bytes) has 16-bit sizes; every later header 32-bit signed ones (a negative height is top-down).
  const width = dibSize === 12 ? head.readUInt16LE(18) : Math.abs(head.readInt32LE(18))
  const height = dibSize === 12 ? head.readUInt16LE(20) : Math.abs(head.readInt32LE(22))
  const { maxImagePixels } = fileLimits()
  if (width * height > maxImagePixels) {
    throw new ExtractionError('too_large', `BMP image has more than ${megapixels(maxImagePixels)}`)
  }
}
