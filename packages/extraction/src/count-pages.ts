import { open } from 'node:fs/promises'
import sharp from 'sharp'
import { pagesForTextLength, readDocxStoredPageCount, readDocxText } from './docx.ts'
import type { FileType } from './file-types.ts'
import { countImagePages } from './image-pages.ts'
import { ExtractionError } from './errors.ts'
import { openPdf } from './pdf-document.ts'

/**
 * Pages of a document, as counted at intake (credits are reserved from it).
 * - PDF: the page tree's count (pdf.js parses the cross-reference table, not the pages).
 * - TIFF: its pages; other images: 1.
 * - DOCX: `<Pages>` from docProps/app.xml when Word stored it, else 1 per started 3,000
 *   characters of its text (DESIGN, Submission details).
 */
export async function countPages(path: string, type: FileType): Promise<number> {
  switch (type) {
    case 'pdf': {
      const doc = await openPdf(path)
      try {
        return doc.numPages
      } finally {
        await doc.destroy()
      }
    }
    case 'docx': {
      const stored = await readDocxStoredPageCount(path)
      if (stored) return stored
      return pagesForTextLength((await readDocxText(path)).length)
    }
    default:
      return countImagePages(path, type)
  }
}

/** Decoding a page at this size (longest side, px) proves it decodes without rendering it at full size. */
const PROBE_SIDE = 64
const CFB_MAGIC = Buffer.from('d0cf11e0a1b11ae1', 'hex')

/**
 * Proves a file of a recognised type can be read, cheaply enough for initialization: a PDF opens (not encrypted,
 * cross-reference table intact) and has pages; a DOCX is not an encrypted container and its text reads; every page
 * of an image decodes to the end (a truncated PNG, JPEG, TIFF or WebP fails here, whereas its header alone would
 * pass intake). Throws an ExtractionError: `encrypted` or `corrupt_file`.
 */
export async function verifyReadable(path: string, type: FileType): Promise<void> {
  switch (type) {
    case 'pdf': {
      const doc = await openPdf(path)
      try {
        if (doc.numPages < 1) throw new ExtractionError('corrupt_file', 'PDF has no pages')
      } finally {
        await doc.destroy()
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
      // sharp cannot decode BMP; OCR reads it whole in the parse stage.
      return
    default: {
      const pages = await countImagePages(path, type)
      for (let page = 0; page < pages; page++) {
        try {
          await sharp(path, { page, failOn: 'error', limitInputPixels: 300_000_000 })
            .resize(PROBE_SIDE, PROBE_SIDE, { fit: 'inside' })
            .raw()
            .toBuffer()
        } catch (error) {
          const where = pages > 1 ? ` (page ${page + 1} of ${pages})` : ''
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
