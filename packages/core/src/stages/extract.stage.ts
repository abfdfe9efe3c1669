import { extractFields, extractGeneric, resolveSchema } from '@quire/extraction'
import type { PipelineDefinition } from '@quire/domain'
import { documentText, leafDocuments, type LoadedDocument, type LoadedJob, type StageExecutor } from './stage-context.ts'

/** The schema a document is extracted with: the request's, else its classified type's, else the catch-all. */
export function schemaIdFor(job: LoadedJob, doc: LoadedDocument, definition: PipelineDefinition): string {
  return job.schemaId ?? doc.schemaId ?? definition.routing.catch_all_schema_id
}

export const extractStage: StageExecutor = {
  stage: 'extract',
  documentsFor: leafDocuments,
  async run({ job, definition }) {
    const results = leafDocuments(job).map((doc) => {
      const schemaId = schemaIdFor(job, doc, definition)
      const schema = resolveSchema(schemaId, definition.schemas)
      const text = documentText(doc)
      const data = schema && schemaId !== 'generic' ? extractFields(text, schema) : extractGeneric(text)
      return { doc, schemaId, data }
    })
    return {
      events: results.map((r) => ({
        workspaceId: job.workspaceId,
        type: 'document.extracted' as const,
        jobId: job.id,
        documentId: r.doc.id,
        data: { schema_id: r.schemaId },
      })),
      apply: async (tx) => {
        for (const r of results) {
          await tx.document.update({ where: { id: r.doc.id }, data: { schemaId: r.schemaId, data: r.data as object } })
        }
      },
    }
  },
}
