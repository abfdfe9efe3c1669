import {
  extractFields,
  extractGeneric,
  fuseReadings,
  parseLayouts,
  resolveSchema,
  type DocumentInput,
} from '@quire/extraction'
import type { PipelineDefinition } from '@quire/domain'
import {
  leafDocuments,
  type LoadedDocument,
  type LoadedJob,
  type StageExecutor,
  type StageOutput,
} from './stage-context.ts'

/**
 * A document's pages as the extractors take them: the text of each page, the words with positions
 * the parse stage stored beside it (so fields say where they were read), and the file's page numbers.
 */
export function documentInput(doc: LoadedDocument): DocumentInput {
  const content = doc.content as { pages?: string[]; layout?: unknown } | null
  return pagesInput(doc, content)
}

/** The second OCR reading of a document's pages (the fused engine), as the extractors take it; null without one. */
export function secondReadingInput(doc: LoadedDocument): DocumentInput | null {
  const content = doc.content as { second?: { pages?: string[]; layout?: unknown } } | null
  return Array.isArray(content?.second?.pages) ? pagesInput(doc, content.second) : null
}

function pagesInput(doc: LoadedDocument, content: { pages?: string[]; layout?: unknown } | null | undefined) {
  const pages = content?.pages ?? []
  const numbers = Array.isArray(doc.pages) && doc.pages.length === pages.length ? (doc.pages as number[]) : undefined
  return { pages, layouts: parseLayouts(content?.layout), pageNumbers: numbers }
}

/** The schema a document is extracted with: the request's, else its classified type's, else the catch-all. */
export function schemaIdFor(job: LoadedJob, doc: LoadedDocument, definition: PipelineDefinition): string {
  return job.schemaId ?? doc.schemaId ?? definition.routing.catch_all_schema_id
}

export const extractStage: StageExecutor = {
  stage: 'extract',
  documentsFor: leafDocuments,
  async run({ job, definition }) {
    // One document's extraction throwing fails that document only.
    const failedDocuments: NonNullable<StageOutput['failedDocuments']> = []
    const results = leafDocuments(job).flatMap((doc) => {
      const schemaId = schemaIdFor(job, doc, definition)
      try {
        const schema = resolveSchema(schemaId, definition.schemas)
        const input = documentInput(doc)
        const second = secondReadingInput(doc)
        // Two readings of a scan: the fields of each, fused field by field (agreement makes a value surer).
        const data =
          schema && schemaId !== 'generic'
            ? second
              ? fuseReadings(extractFields(input, schema), extractFields(second, schema))
              : extractFields(input, schema)
            : extractGeneric(input.pages.join('\n\n'))
        return [{ doc, schemaId, data }]
      } catch (err) {
        failedDocuments.push({
          documentId: doc.id,
          code: 'extraction_failed',
          message: `extraction failed: ${(err as Error)?.message ?? String(err)}`,
        })
        return []
      }
    })
    return {
      failedDocuments,
      events: results.map((r) => ({
        workspaceId: job.workspaceId,
        type: 'document.extracted' as const,
        jobId: job.id,
        documentId: r.doc.id,
        data: { schema_id: r.schemaId },
      })),
      documents: results.map((r) => ({ update: r.doc.id, set: { schemaId: r.schemaId, data: r.data } })),
    }
  },
}
