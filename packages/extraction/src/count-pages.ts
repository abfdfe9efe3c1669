import { pagesForTextLength, readDocxStoredPageCount, readDocxText } from './docx.ts'
import type { FileType } from './file-types.ts'
import { countImagePages } from './image-pages.ts'
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
