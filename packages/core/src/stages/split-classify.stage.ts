import { childDocumentIdFor } from '@quire/domain'
import { classify, splitPages } from '@quire/extraction'
import { type DocumentWrite, rootDocuments, type StageExecutor, type StageOutput } from './stage-context.ts'

/** A page with fewer visible characters than this gave no text (neither a text layer nor OCR read anything). */
const MIN_PAGE_CHARS = 1

/**
 * Splits each file into documents per the pipeline's split mode and classifies them by keywords. A child document
 * none of whose pages gave any text (a damaged page whose content cannot be read, neither as text nor by OCR) fails
 * with `unreadable_pages`; its siblings go on (DESIGN: a split child failing does not sink the others).
 */
export const splitClassifyStage: StageExecutor = {
  stage: 'split_classify',
  documentsFor: rootDocuments,
  async run({ job, definition }) {
    const failedDocuments: NonNullable<StageOutput['failedDocuments']> = []
    const writes: DocumentWrite[] = []
    for (const doc of rootDocuments(job)) {
      const content = doc.content as {
        pages?: string[]
        layout?: unknown[]
        second?: { pages?: string[]; layout?: unknown[] }
      } | null
      const pages = (content?.pages ?? []) as string[]
      const groups = splitPages(pages, definition.split.mode, definition.document_types)
      if (groups.length <= 1) {
        const c = classify(pages.join('\n\n'), definition.document_types)
        writes.push({ update: doc.id, set: { type: c.type, schemaId: c.schemaId } })
        continue
      }
      writes.push({ update: doc.id, set: { status: 'split' } })
      groups.forEach((g, i) => {
        const childPages = g.pages.map((n) => pages[n - 1] ?? '')
        // Each child keeps its pages' word positions (they carry the file's page numbers).
        const childLayout = Array.isArray(content?.layout)
          ? g.pages.map((n) => content.layout?.[n - 1] ?? null)
          : undefined
        const second = content?.second
        const childSecond = Array.isArray(second?.pages)
          ? {
              pages: g.pages.map((n) => second.pages?.[n - 1] ?? ''),
              ...(Array.isArray(second.layout) ? { layout: g.pages.map((n) => second.layout?.[n - 1] ?? null) } : {}),
            }
          : undefined
        if (childPages.every((p) => p.replace(/\s/g, '').length < MIN_PAGE_CHARS)) {
          failedDocuments.push({
            documentId: childDocumentIdFor(doc.id, i + 1),
            code: 'unreadable_pages',
            message: `no text could be read from page${g.pages.length > 1 ? 's' : ''} ${g.pages.join(', ')}`,
          })
        }
        writes.push({
          create: {
            id: childDocumentIdFor(doc.id, i + 1),
            parentId: doc.id,
            filePosition: doc.filePosition,
            status: 'processing',
            type: g.type,
            schemaId: g.schemaId,
            pages: g.pages,
            metadata: doc.metadata,
            content: {
              pages: childPages,
              ...(childLayout ? { layout: childLayout } : {}),
              ...(childSecond ? { second: childSecond } : {}),
            },
          },
        })
      })
    }
    return {
      failedDocuments,
      documents: writes,
    }
  },
}
