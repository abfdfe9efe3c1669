import { ExtractionError, type FileType, fileLimits, openPdf, rasterisePdfPage } from '@quire/extraction'
import sharp, { type Sharp } from 'sharp'

/** Longest side of a page image for a reviewer (DESIGN, "Review desk": at most 2000 px). */
export const MAX_PAGE_IMAGE_SIDE = 2000

/** A PDF point is 1/72 inch: the dpi at which a page's longest side is MAX_PAGE_IMAGE_SIDE pixels. */
const POINTS_PER_INCH = 72

/**
 * One page (1-based, of the file) as a PNG whose longest side is at most MAX_PAGE_IMAGE_SIDE: the whole page, in the
 * geometry the extracted `bbox` fractions refer to (a PDF page's viewport, an image's own pixels, unrotated as OCR
 * reads them). Held to the process's file limits as parsing is (`fileLimits()`: images by their pixel count before
 * decoding, images inside a PDF by pdf.js's `maxImageSize`). A PDF page is drawn by pdf.js as parsing draws it
 * (`@quire/extraction`'s openPdf and rasterisePdfPage), in colour. Runs in the page-image child process
 * (page-image.child.ts), never on the API's event loop.
 */
export async function renderPageImage(opts: { path: string; type: FileType; page: number }): Promise<Buffer> {
  const limits = fileLimits()
  if (opts.type === 'pdf') {
    const doc = await openPdf(opts.path, { withCanvas: true })
    try {
      const page = await doc.getPage(opts.page)
      const viewport = page.getViewport({ scale: 1 })
      const dpi = (MAX_PAGE_IMAGE_SIDE * POINTS_PER_INCH) / Math.max(viewport.width, viewport.height, 1)
      const png = await rasterisePdfPage({
        path: opts.path,
        doc,
        pageNumber: opts.page,
        rasteriser: 'pdfjs',
        dpi,
        colour: true,
      })
      return toPagePng(sharp(png, { limitInputPixels: limits.maxImagePixels }))
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
