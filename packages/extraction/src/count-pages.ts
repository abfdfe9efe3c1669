import { open } from 'node:fs/promises'
import sharp from 'sharp'
import { pagesForTextLength, readDocxStoredPageCount, readDocxText } from './docx.ts'
import { inspectDocx } from './docx-limits.ts'
import { fileLimits, megapixels } from './file-limits.ts'
import type { FileType } from './file-types.ts'
import { checkBmpPixels, countImagePages, isPixelLimitError } from './image-pages.ts'
import { ExtractionError } from './errors.ts'
import { openPdfByRanges } from './pdf-document.ts'
import { readPdfPageCount, readPdfPageCountFromBytes } from './pdf-page-count.ts'

/**
 * The first bytes of a file kept as it was written (an upload as it streamed) and the file's size: when they are
 * the whole file, countPages reads them instead of the file.
 */
export type KeptHead = { head: Buffer; sizeBytes: number }

/**
 * Pages of a document, as counted at intake (credits are reserved from it).
 * - PDF: the page tree's /Count, read from the file's structure (pdf-page-count.ts: the cross-reference and two
 *   objects, no parser), from the kept head when it is the whole file, without opening it; pdf.js, as before,
 *   whenever that reader is unsure (damaged, encrypted, hybrid files).
 * - TIFF: its pages; other images: 1.
 * - DOCX: 1 per started 3,000 characters of its text (DESIGN, Submission details), counted while the archive is
 *   walked under the file limits (file-limits.ts), or `<Pages>` from docProps/app.xml when Word stored more: credits never rest only on a
 *   number the uploader wrote.
 */
export async function countPages(path: string, type: FileType, kept?: KeptHead): Promise<number> {
  switch (type) {
    case 'pdf': {
      const whole = kept && kept.head.length === kept.sizeBytes ? kept.head : undefined
      const counted = whole
        ? await readPdfPageCountFromBytes(whole, fileLimits().maxPages)
        : await readPdfPageCount(path, fileLimits().maxPages)
      if (counted !== null) return counted
      // By ranges: the API counts pages at intake and must not hold a large upload in memory to do it.
      const doc = await openPdfByRanges(path)
      try {
        return doc.numPages
      } finally {
        await doc.destroy()
        await doc.closeFile()
      }
    }
    case 'docx': {
      const { textChars } = await inspectDocx(path)
      const stored = await readDocxStoredPageCount(path)
      return Math.max(stored ?? 1, pagesForTextLength(textChars))
    }
    default:
      return countImagePages(path, type)
  }
}

/**
 * Refuses a PDF or TIFF of more pages than `fileLimits().maxPages` (ExtractionError `too_large`). Intake calls it with
 * the count it already has; initialization checks again.
 */
export function checkPageLimit(type: FileType, pages: number): void {
  const { maxPages } = fileLimits()
  if ((type === 'pdf' || type === 'tiff') && pages > maxPages) {
    throw new ExtractionError('too_large', `${type.toUpperCase()} has ${pages} pages; Quire reads at most ${maxPages}`)
  }
}

/** Decoding a page at this size (longest side, px) proves it decodes without rendering it at full size. */
const PROBE_SIDE = 64
const CFB_MAGIC = Buffer.from('d0cf11e0a1b11ae1', 'hex')

/**
 * Proves a file of a recognised type can be read, cheaply enough for initialization: a PDF opens (not encrypted,
 * cross-reference table intact) and has pages; a DOCX is not an encrypted container and its text reads; every page
 * of an image decodes to the end (a truncated PNG, JPEG, TIFF or WebP fails here, whereas its header alone would
 * pass intake). Throws an ExtractionError: `encrypted`, `corrupt_file`, or `too_large` (over a file limit: pages,
 * pixels, what a DOCX inflates to).
 */
export async function verifyReadable(path: string, type: FileType): Promise<void> {
  switch (type) {
    case 'pdf': {
      // By ranges, like intake: the stage worker runs this in-process and need not hold the file to count pages.
      const doc = await openPdfByRanges(path)
      try {
        if (doc.numPages < 1) throw new ExtractionError('corrupt_file', 'PDF has no pages')
        checkPageLimit('pdf', doc.numPages)
      } finally {
        await doc.destroy()
        await doc.closeFile()
      }
      return
    }
    case 'docx': {
      if (await startsWith(path, CFB_MAGIC)) {
        throw new ExtractionError('encrypted', 'DOCX is encrypted (password-protected)')
      }
      await readDocxText(path)
      return
    }
    case 'bmp':
      // sharp cannot decode BMP; OCR reads it whole in the parse stage: its size is checked from the header.
      await checkBmpPixels(path)
      return
    default: {
      const pages = await countImagePages(path, type)
      checkPageLimit(type, pages)
      const { maxImagePixels } = fileLimits()
      for (let page = 0; page < pages; page++) {
        try {
          await sharp(path, { page, failOn: 'error', limitInputPixels: maxImagePixels })
            .resize(PROBE_SIDE, PROBE_SIDE, { fit: 'inside' })
            .raw()
            .toBuffer()
        } catch (error) {
          const where = pages > 1 ? ` (page ${page + 1} of ${pages})` : ''
          if (isPixelLimitError(error)) {
            throw new ExtractionError(
              'too_large',
              `${type.toUpperCase()} image${where} has more than ${megapixels(maxImagePixels)}`,
              { cause: error },
            )
          }
          throw new ExtractionError(
            'corrupt_file',
            `${type.toUpperCase()} image is damaged or truncated${where}: ${(error as Error).message.split('\n')[0]}`,
            { cause: error },
          )
        }
      }
    }
  }
}

async function startsWith(path: string, magic: Buffer): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(magic.length)
    const { bytesRead } = await handle.read(head, 0, magic.length, 0)
    return bytesRead === magic.length && head.equals(magic)
  } finally {
    await handle.close()
  }
}
