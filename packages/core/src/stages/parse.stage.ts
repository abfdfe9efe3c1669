import { parseDocument, type FileType } from '@quire/extraction'
import { creditsForPages } from '@quire/domain'
import { rootDocuments, type StageExecutor, type StageOutput } from './stage-context.ts'

/** Text per page for every file: embedded text where a PDF has it, OCR for scans and images. */
export const parseStage: StageExecutor = {
  stage: 'parse',
  documentsFor: rootDocuments,
  async run({ deps, job, definition }) {
    const parsed: { id: string; pages: string[]; ocrPages: number[] }[] = []
    const failedDocuments: NonNullable<StageOutput['failedDocuments']> = []
    let pagesParsed = 0
    for (const doc of rootDocuments(job)) {
      const file = job.files.find((f) => f.position === doc.filePosition)
      if (!file) continue
      try {
        const result = await parseDocument(await deps.blobs.localPath(file.blobKey), file.fileType as FileType, {
          ocr: deps.ocr,
        })
        parsed.push({ id: doc.id, pages: result.pages, ocrPages: result.ocrPages })
        pagesParsed += file.pageCount
      } catch (err) {
        failedDocuments.push({ documentId: doc.id, message: `could not parse: ${(err as Error).message}` })
      }
    }
    return {
      credits: creditsForPages(pagesParsed, definition.credits.per_page),
      failedDocuments,
      apply: async (tx) => {
        for (const p of parsed) {
          await tx.document.update({
            where: { id: p.id },
            data: { content: { pages: p.pages, ocr_pages: p.ocrPages } },
          })
        }
      },
    }
  },
}
