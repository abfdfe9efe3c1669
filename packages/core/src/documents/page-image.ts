import { readFile } from 'node:fs/promises'
import { ExtractionError, type FileLimits, type FileType } from '@quire/extraction'
import sharp, { type Sharp } from 'sharp'
import { createIsomorphicCanvasFactory, getDocumentProxy, renderPageAsImage } from 'unpdf'

/** Longest side of a page image for a reviewer (DESIGN, "Review desk": at most 2000 px). */
export const MAX_PAGE_IMAGE_SIDE = 2000

const importCanvas = () => import('@napi-rs/canvas')

// pdf.js (inside unpdf 1.7) calls ArrayBuffer.prototype.transferToFixedLength while building operator lists; Node 20
// lacks it and text pages then render blank (the same polyfill as @quire/extraction's pdf-polyfill.ts, which that
// package does not export).
type WithTransfer = { transferToFixedLength?: (length?: number) => ArrayBuffer }
if (!(ArrayBuffer.prototype as WithTransfer).transferToFixedLength) {
  Object.defineProperty(ArrayBuffer.prototype, 'transferToFixedLength', {
    configurable: true,
    writable: true,
    value(this: ArrayBuffer, length: number = this.byteLength): ArrayBuffer {
      const copy = new ArrayBuffer(length)
      new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)))
      return copy
    },
  })
}

/**
 * One page (1-based, of the file) as a PNG whose longest side is at most MAX_PAGE_IMAGE_SIDE: the whole page, in the
 * geometry the extracted `bbox` fractions refer to (a PDF page's viewport, an image's own pixels, unrotated as OCR
 * reads them). Held to the same file limits as parsing: images by their pixel count before decoding, images inside a
 * PDF by pdf.js's `maxImageSize`. Runs in the page-image child process (page-image.child.ts), never on the API's
 * event loop.
 */
export async function renderPageImage(opts: {
  path: string
  type: FileType
  page: number
  limits: FileLimits
}): Promise<Buffer> {
  const { limits } = opts
  if (opts.type === 'pdf') {
    const data = new Uint8Array(await readFile(opts.path))
    const CanvasFactory = await createIsomorphicCanvasFactory(importCanvas)
    const doc = await getDocumentProxy(data, { verbosity: 0, maxImageSize: limits.maxImagePixels, CanvasFactory })
    try {
      const page = await doc.getPage(opts.page)
      const viewport = page.getViewport({ scale: 1 })
      const scale = MAX_PAGE_IMAGE_SIDE / Math.max(viewport.width, viewport.height, 1)
      const png = await renderPageAsImage(doc, opts.page, { canvasImport: importCanvas, scale })
      return toPagePng(sharp(Buffer.from(png), { limitInputPixels: limits.maxImagePixels }))
    } finally {
      await doc.destroy()
    }
  }
  if (opts.type === 'bmp' || opts.type === 'docx') {
    // BMP: sharp cannot decode it (OCR hands tesseract the file); DOCX: its pages are not laid out, no field has a box.
    throw new ExtractionError('unsupported_type', `no page image for a ${opts.type} file`)
  }
  const image = sharp(opts.path, {
    page: opts.type === 'tiff' ? opts.page - 1 : 0,
    limitInputPixels: limits.maxImagePixels,
  })
  return toPagePng(image)
}

const toPagePng = (image: Sharp) =>
  image
    .flatten({ background: '#ffffff' })
    .resize({ width: MAX_PAGE_IMAGE_SIDE, height: MAX_PAGE_IMAGE_SIDE, fit: 'inside', withoutEnlargement: true })
    .png({ compressionLevel: 9, palette: true })
    .toBuffer()
