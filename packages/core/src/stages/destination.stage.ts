import { isUndeliveredDocument } from '@quire/domain'
import type { Db } from '@quire/db'
import { leafDocuments, type LoadedJob, type StageExecutor } from './stage-context.ts'
import { OperatorFixableError } from './stage-failures.ts'

/** The result JSON written to a destination as `<job_id>.json`: the job and every document it produced. */
export function destinationResult(job: LoadedJob, deliveredIds: Set<string>) {
  return {
    job_id: job.id,
    pipeline: { id: job.pipelineId, version: job.pipelineVersion },
    environment: job.environment,
    source_tag: job.sourceTag ?? undefined,
    client_reference_id: job.clientReferenceId ?? undefined,
    metadata: job.metadata ?? undefined,
    created_at: job.createdAt.toISOString(),
    files: job.files.map((f) => ({ file_name: f.fileName, type: f.fileType, pages: f.pageCount })),
    documents: job.documents
      .filter((d) => d.status !== 'split')
      .map((d) => ({
        id: d.id,
        parent_id: d.parentId ?? undefined,
        status: deliveredIds.has(d.id) ? 'completed' : d.status,
        type: d.type,
        schema_id: d.schemaId,
        pages: d.pages,
        data: d.data ?? {},
        ...(d.status === 'failed' ? { error: { code: d.errorCode, message: d.errorMessage } } : {}),
      })),
  }
}

/** The history lines the destination stage writes on each document it delivers (a test run's skip included). */
const DELIVERY_NOTES = ['delivered', 'destination_skipped_test_run']

/**
 * The job's documents an earlier destination run already delivered: those its history says so of. Only a job running
 * post_processing and destination again after review has any, and only a `completed` document can be one (approved
 * documents are `completed` too, undelivered), so the usual first run asks the database nothing.
 */
export async function alreadyDelivered(db: Db, job: LoadedJob): Promise<Set<string>> {
  const completed = leafDocuments(job)
    .filter((d) => d.status === 'completed')
    .map((d) => d.id)
  if (completed.length === 0) return new Set()
  const rows = await db.$queryRaw<{ document_id: string }[]>`
    SELECT DISTINCT document_id FROM document_events
    WHERE document_id = ANY(${completed}) AND type = ANY(${DELIVERY_NOTES})`
  return new Set(rows.map((r) => r.document_id))
}

/**
 * Delivers results. The job's own result store (read through the API and webhooks) always has them; a pipeline may
 * also name an operator-configured destination (`destination.name`, a QUIRE_DESTINATIONS key), where the result is
 * written as `<job_id>.json`. Test runs (`run_kind=test`, environment `test`) never deliver to destinations. A
 * destination that is unknown, unreachable or refuses the write is for an operator to fix: the job parks (blocked)
 * and is re-run from here once fixed; the file name is the job id, so a re-run replaces, never duplicates.
 * Run again after review, it writes the file from every deliverable document, but marks and notes as delivered only
 * those not delivered before.
 */
export const destinationStage: StageExecutor = {
  stage: 'destination',
  documentsFor: () => [],
  async run({ deps, job, definition }) {
    // Parked (in review, escalated) and rejected documents are not delivered.
    const deliverable = leafDocuments(job).filter((d) => !isUndeliveredDocument(d.status))
    const isTest = job.environment === 'test'
    const name = definition.destination?.name
    let delivered: string | null = null
    if (name && !isTest) {
      if (!deps.destinations?.has(name)) {
        throw new OperatorFixableError(
          'destination_not_configured',
          `destination "${name}" is not configured on the stage worker (QUIRE_DESTINATIONS)`,
        )
      }
      const body = destinationResult(job, new Set(deliverable.map((d) => d.id)))
      try {
        await deps.destinations.write(name, `${job.id}.json`, `${JSON.stringify(body, null, 2)}\n`)
      } catch (err) {
        throw new OperatorFixableError(
          'destination_unavailable',
          `destination "${name}" is unavailable: ${(err as Error).message}`,
          { cause: err },
        )
      }
      delivered = name
    }
    const eventType = isTest ? 'destination_skipped_test_run' : 'delivered'
    const before = await alreadyDelivered(deps.db, job)
    const fresh = deliverable.filter((d) => !before.has(d.id))
    return {
      documents: fresh.map((d) => ({ update: d.id, set: { status: 'completed' } })),
      notes: fresh.map((d) => ({
        documentId: d.id,
        type: eventType,
        ...(delivered ? { data: { destination: delivered } } : {}),
      })),
    }
  },
}
