import { alreadyDelivered } from './destination.stage.ts'
import { leafDocuments, type StageExecutor } from './stage-context.ts'

type FieldValue = { value: unknown; confidence: number }

const tidy = (v: FieldValue): FieldValue =>
  typeof v.value === 'string' ? { ...v, value: v.value.replace(/\s+/g, ' ').trim() } : v

/**
 * Optional clean-up of extracted values (whitespace), enabled per pipeline. Run again after review (a `partial` job
 * resuming), it takes only the documents not delivered yet: the ones decided since; those delivered keep what the
 * first run gave them. (Its per-document stage events still name every leaf document: documentsFor cannot ask the
 * database.)
 */
export const postProcessingStage: StageExecutor = {
  stage: 'post_processing',
  documentsFor: leafDocuments,
  enabled: (definition) => definition.post_processing.enabled,
  async run({ deps, job }) {
    const delivered = await alreadyDelivered(deps.db, job)
    const cleaned = leafDocuments(job)
      .filter((doc) => !delivered.has(doc.id))
      .map((doc) => {
        const data = (doc.data ?? {}) as Record<string, FieldValue | Array<Record<string, FieldValue>>>
        const out: Record<string, FieldValue | Array<Record<string, FieldValue>>> = {}
        for (const [k, v] of Object.entries(data)) {
          // An item table (`line_items`): each row's cells as the single fields.
          out[k] = Array.isArray(v)
            ? v.map((row) => Object.fromEntries(Object.entries(row).map(([c, cell]) => [c, tidy(cell)])))
            : tidy(v)
        }
        return { id: doc.id, data: out }
      })
    return {
      documents: cleaned.map((c) => ({ update: c.id, set: { data: c.data } })),
    }
  },
}
