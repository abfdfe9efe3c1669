import { resolveSchema } from '@quire/extraction'
import type { PipelineDefinition } from '@quire/domain'
import { leafDocuments, type StageExecutor } from './stage-context.ts'

type FieldValue = { value: unknown; confidence: number }
type Table = Array<Record<string, FieldValue>>

/** At most this many low cells of an item table are named; the rest are counted. */
const MAX_NAMED_CELLS = 3

const found = (v: FieldValue | Table | undefined): boolean =>
  Array.isArray(v) ? v.length > 0 : (v?.value ?? null) !== null

/**
 * Why a document needs a reviewer: a required field missing, a found value below the pipeline's confidence bar, or
 * (under a bar above 0) no field of its schema found at all.
 * An item table (`line_items`) counts as found when it has a row. Its cells are held to the bar only when the schema
 * requires the table: a misread row of an invoice whose key fields are sure does not park it unless the pipeline
 * said the items matter (README, Extraction: line items).
 * Used by the validate stage and again on a reviewer's corrected data.
 */
export function reviewProblems(
  doc: { schemaId: string | null; data: unknown },
  definition: PipelineDefinition,
): string[] {
  const data = (doc.data ?? {}) as Record<string, FieldValue | Table>
  const schema = doc.schemaId ? resolveSchema(doc.schemaId, definition.schemas) : null
  const problems: string[] = []
  for (const f of schema?.fields ?? []) {
    if (f.required && !found(data[f.name])) problems.push(`${f.name}: required field not found`)
  }
  const bar = definition.review.min_confidence
  const required = new Set((schema?.fields ?? []).filter((f) => f.required).map((f) => f.name))
  for (const [name, v] of Object.entries(data)) {
    if (Array.isArray(v)) {
      if (required.has(name)) problems.push(...lowCells(name, v, bar))
    } else if (v.value !== null && v.confidence < bar) problems.push(`${name}: confidence ${v.confidence} below ${bar}`)
  }
  // A document none of whose fields was found was read with confidence 0 (DESIGN: a field not found reads
  // `{value: null, confidence: 0}`): below any bar above 0, though no found value is.
  const fields = schema?.fields ?? []
  if (bar > 0 && fields.length > 0 && fields.every((f) => !found(data[f.name]))) {
    problems.push(`no field of ${doc.schemaId} found: confidence 0 below ${bar}`)
  }
  return problems
}

/** The found cells of a required item table below the bar: `line_items[2].amount: confidence 0.5 below 0.8`. */
function lowCells(name: string, rows: Table, bar: number): string[] {
  const low: string[] = []
  rows.forEach((row, i) => {
    for (const [cell, v] of Object.entries(row ?? {})) {
      if (v && v.value !== null && v.confidence < bar)
        low.push(`${name}[${i}].${cell}: confidence ${v.confidence} below ${bar}`)
    }
  })
  return low.length > MAX_NAMED_CELLS
    ? [...low.slice(0, MAX_NAMED_CELLS), `${name}: ${low.length - MAX_NAMED_CELLS} more cells below ${bar}`]
    : low
}

/**
 * Parks a document for review when a required field is missing or a found field is below the confidence bar. A job
 * told to wait for review (`waitForReview`, set at submission) then pauses in `awaiting_review` until every parked
 * document is decided (core `reviewDocument` resumes it); otherwise (or under `review.hold: document`) it goes on.
 */
export const validateStage: StageExecutor = {
  stage: 'validate',
  documentsFor: () => [],
  async run({ job, definition }) {
    const verdicts = leafDocuments(job).map((doc) => ({ doc, problems: reviewProblems(doc, definition) }))
    const parked = verdicts.filter((v) => v.problems.length > 0)
    return {
      // Under `review.hold: document` only the parked documents wait: the others go on, and the job ends `partial`
      // (run-stage) until the last parked one is decided.
      holdForReview: job.waitForReview && parked.length > 0 && definition.review.hold === 'job',
      events: parked.map((v) => ({
        workspaceId: job.workspaceId,
        type: 'document.review_required' as const,
        jobId: job.id,
        documentId: v.doc.id,
        data: { problems: v.problems },
      })),
      documents: parked.map((v) => ({ update: v.doc.id, set: { status: 'in_review' } })),
      // Each document's history: parked with its problems, or through validate like a per-document stage.
      notes: verdicts.map((v) =>
        v.problems.length > 0
          ? { documentId: v.doc.id, type: 'review_required', data: { problems: v.problems } }
          : { documentId: v.doc.id, type: 'stage_completed', data: { stage: 'validate', status: v.doc.status } },
      ),
    }
  },
}
