import { extractFields, extractGeneric, parseLayouts, resolveSchema, type DocumentInput } from '@quire/extraction'
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
        const data =
          schema && schemaId !== 'generic' ? extractFields(input, schema) : extractGeneric(input.pages.join('\n\n'))
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
