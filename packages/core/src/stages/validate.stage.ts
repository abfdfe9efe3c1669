import { resolveSchema } from '@quire/extraction'
import { newId } from '@quire/domain'
import { leafDocuments, type StageExecutor } from './stage-context.ts'

type FieldValue = { value: unknown; confidence: number }

/** Parks a document for review when a required field is missing or a found field is below the confidence bar. */
export const validateStage: StageExecutor = {
  stage: 'validate',
  documentsFor: () => [],
  async run({ job, definition }) {
    const verdicts = leafDocuments(job).map((doc) => {
      const data = (doc.data ?? {}) as Record<string, FieldValue>
      const schema = doc.schemaId ? resolveSchema(doc.schemaId, definition.schemas) : null
      const problems: string[] = []
      for (const f of schema?.fields ?? []) {
        if (f.required && (data[f.name]?.value ?? null) === null) problems.push(`${f.name}: required field not found`)
      }
      for (const [name, v] of Object.entries(data)) {
        if (v.value !== null && v.confidence < definition.review.min_confidence) {
          problems.push(`${name}: confidence ${v.confidence} below ${definition.review.min_confidence}`)
        }
      }
      return { doc, problems }
    })
    const parked = verdicts.filter((v) => v.problems.length > 0)
    return {
      events: parked.map((v) => ({
        workspaceId: job.workspaceId,
        type: 'document.review_required' as const,
        jobId: job.id,
        documentId: v.doc.id,
        data: { problems: v.problems },
      })),
      apply: async (tx) => {
        for (const v of parked) {
          await tx.document.update({ where: { id: v.doc.id }, data: { status: 'in_review' } })
          await tx.documentEvent.create({
            data: { id: newId('dev'), documentId: v.doc.id, type: 'review_required', data: { problems: v.problems } },
          })
        }
      },
    }
  },
}
