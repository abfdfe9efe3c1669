import { newId } from '@quire/domain'
import type { Document, StageRun, Tx } from '@quire/db'
import type { DocumentNote, DocumentWrite, LoadedJob } from './stage-context.ts'

// The rows a run of stages writes at a durable checkpoint, each kind in one set-based statement: every document the
// stages touched (its whole row as the stages left it), their history lines and their stage runs. Prisma would
// send one statement per row; on the hot path that is most of a stage's cost.

/**
 * Applies a stage's document writes to the job the next stage sees. A create is ignored when the document exists
 * (a re-run keeps the first); an update of a document the job does not have is a bug in the stage.
 */
export function applyDocumentWrites(job: LoadedJob, writes: DocumentWrite[], at: Date, touched: Set<string>) {
  for (const w of writes) {
    if ('create' in w) {
      const c = w.create
      if (job.documents.some((d) => d.id === c.id)) continue
      const doc: Document = {
        id: c.id,
        jobId: job.id,
        parentId: c.parentId ?? null,
        filePosition: c.filePosition,
        status: c.status,
        type: c.type ?? null,
        schemaId: c.schemaId ?? null,
        pages: c.pages,
        metadata: (c.metadata ?? null) as Document['metadata'],
        content: (c.content ?? null) as Document['content'],
        data: null,
        errorCode: null,
        errorMessage: null,
        createdAt: at,
        updatedAt: at,
      }
      // Kept in id order, as loadJobForStage reads them.
      const at_ = job.documents.findIndex((d) => d.id > doc.id)
      job.documents.splice(at_ === -1 ? job.documents.length : at_, 0, doc)
      touched.add(doc.id)
      continue
    }
    const doc = job.documents.find((d) => d.id === w.update)
    if (!doc) throw new Error(`stage wrote to document ${w.update}, which job ${job.id} does not have`)
    Object.assign(doc, w.set, { updatedAt: at })
    touched.add(doc.id)
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/** Writes the documents as they are now: inserted when new, every changeable column replaced when not. */
export async function writeDocuments(tx: Tx, docs: Document[]) {
  if (docs.length === 0) return
  const rows = docs.map((d) => ({
    id: d.id,
    job_id: d.jobId,
    parent_id: d.parentId,
    file_position: d.filePosition,
    status: d.status,
    type: d.type,
    schema_id: d.schemaId,
    pages: d.pages,
    metadata: d.metadata,
    content: d.content,
    data: d.data,
    error_code: d.errorCode,
    error_message: d.errorMessage,
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
  }))
  await tx.$executeRaw`
    INSERT INTO documents (id, job_id, parent_id, file_position, status, type, schema_id, pages, metadata, content, data,
                           error_code, error_message, created_at, updated_at)
    SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS d(
      id text, job_id text, parent_id text, file_position int, status text, type text, schema_id text, pages int[],
      metadata jsonb, content jsonb, data jsonb, error_code text, error_message text, created_at timestamp(3),
      updated_at timestamp(3))
    ON CONFLICT (id) DO UPDATE SET
      status = EXCLUDED.status, type = EXCLUDED.type, schema_id = EXCLUDED.schema_id, content = EXCLUDED.content,
      data = EXCLUDED.data, error_code = EXCLUDED.error_code, error_message = EXCLUDED.error_message,
      updated_at = EXCLUDED.updated_at`
}

/** Appends lines to documents' own histories. */
export async function writeDocumentNotes(tx: Tx, notes: (DocumentNote & { at: Date })[]) {
  if (notes.length === 0) return
  const rows = notes.map((n) => ({
    id: newId('dev'),
    document_id: n.documentId,
    type: n.type,
    data: n.data ?? null,
    created_at: n.at.toISOString(),
  }))
  await tx.$executeRaw`
    INSERT INTO document_events (id, document_id, type, data, created_at)
    SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS n(
      id text, document_id text, type text, data jsonb, created_at timestamp(3))`
}

/** Writes stage runs as they are now (one per job and stage). */
export async function writeStageRuns(tx: Tx, runs: StageRun[]) {
  if (runs.length === 0) return
  const rows = runs.map((r) => ({
    id: r.id,
    job_id: r.jobId,
    stage: r.stage,
    status: r.status,
    attempts: r.attempts,
    credits: r.credits,
    error: r.error,
    started_at: iso(r.startedAt),
    completed_at: iso(r.completedAt),
    ms: r.ms,
    cpu_ms: r.cpuMs,
    continued_inline: r.continuedInline,
  }))
  await tx.$executeRaw`
    INSERT INTO stage_runs (id, job_id, stage, status, attempts, credits, error, started_at, completed_at, ms, cpu_ms,
                            continued_inline)
    SELECT r.id, r.job_id, r.stage, r.status::"StageRunStatus", r.attempts, r.credits, r.error, r.started_at,
           r.completed_at, r.ms, r.cpu_ms, r.continued_inline
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(
      id text, job_id text, stage text, status text, attempts int, credits int, error text, started_at timestamp(3),
      completed_at timestamp(3), ms int, cpu_ms int, continued_inline boolean)
    ON CONFLICT (job_id, stage) DO UPDATE SET
      status = EXCLUDED.status, attempts = EXCLUDED.attempts, credits = EXCLUDED.credits, error = EXCLUDED.error,
      started_at = EXCLUDED.started_at, completed_at = EXCLUDED.completed_at, ms = EXCLUDED.ms,
      cpu_ms = EXCLUDED.cpu_ms, continued_inline = EXCLUDED.continued_inline`
}
