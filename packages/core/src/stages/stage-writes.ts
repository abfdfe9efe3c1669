import { newId, type JobStatus } from '@quire/domain'
import { type Document, Prisma, type RawSql, type StageRun } from '@quire/db'
import type { DocumentNote, DocumentWrite, LoadedJob } from './stage-context.ts'

// The rows a run of stages writes at a durable checkpoint, all in one set-based statement: every document the
// stages touched (its whole row as the stages left it), their history lines, their stage runs and the job's columns.
// Prisma would send one statement per row; on the hot path that is most of a stage's cost.

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

/**
 * The documents, of those given with the status and data a checkpoint committed, whose row now differs (a reviewer
 * decided them since), locked. Call with the job's row locked first: reviewDocument locks the job, then the document.
 */
export async function changedSinceCommit(
  tx: RawSql,
  committed: ReadonlyMap<string, { status: string; data: unknown }>,
): Promise<{ id: string; status: string; data: Prisma.JsonValue }[]> {
  const rows = [...committed].map(([id, c]) => ({ id, status: c.status, data: c.data }))
  return tx.$queryRaw`
    SELECT d.id, d.status, d.data FROM documents d
    JOIN jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS c(id text, status text, data jsonb) ON c.id = d.id
    WHERE d.status IS DISTINCT FROM c.status OR d.data IS DISTINCT FROM c.data
    FOR UPDATE OF d`
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/** The job's own columns a checkpoint changes (the status through the state machine, checked by the caller). */
export type JobChanges = {
  status?: JobStatus
  stageNow?: string | null
  startedAt?: Date
  completedAt?: Date
  creditsUsed?: number
  failedStage?: string
  errorCode?: string
  errorMessage?: string | null
}

/** The job row's update at a checkpoint: `set`, where the row still has `status` (it is locked, so it has). */
export type JobWrite = { id: string; status: JobStatus; set: JobChanges }

/**
 * Writes, in one statement, everything a checkpoint holds that is the runner's own: the documents the stages touched
 * (inserted when new, every changeable column replaced when not), their history lines, their stage runs (one per job
 * and stage) and the job's own columns. Each kind of row is a data-modifying CTE over a JSON recordset; PostgreSQL
 * checks the foreign keys at the end of the statement, so a history line may name a document inserted beside it.
 * A statement a kind of row would cost is a round trip and most of a stage's CPU on the hot path.
 */
export async function writeCheckpoint(
  tx: RawSql,
  w: { documents: Document[]; notes: (DocumentNote & { at: Date })[]; runs: StageRun[]; job?: JobWrite },
) {
  const parts: Prisma.Sql[] = []
  if (w.documents.length > 0) parts.push(Prisma.sql`docs AS (${documentsInsert(w.documents)})`)
  if (w.notes.length > 0) parts.push(Prisma.sql`notes AS (${notesInsert(w.notes)})`)
  if (w.runs.length > 0) parts.push(Prisma.sql`runs AS (${stageRunsUpsert(w.runs)})`)
  const job = w.job && jobUpdate(w.job)
  if (job) parts.push(Prisma.sql`job AS (${job})`)
  if (parts.length === 0) return
  await tx.$executeRaw`WITH ${Prisma.join(parts, ', ')} SELECT 1`
}

function documentsInsert(docs: Document[]) {
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
  return Prisma.sql`
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

function notesInsert(notes: (DocumentNote & { at: Date })[]) {
  const rows = notes.map((n) => ({
    id: newId('dev'),
    document_id: n.documentId,
    type: n.type,
    data: n.data ?? null,
    created_at: n.at.toISOString(),
  }))
  return Prisma.sql`
    INSERT INTO document_events (id, document_id, type, data, created_at)
    SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS n(
      id text, document_id text, type text, data jsonb, created_at timestamp(3))`
}

function stageRunsUpsert(runs: StageRun[]) {
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
  return Prisma.sql`
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

/** The UPDATE of the job's columns in `set` (null when there are none). Timestamps as UTC wall-clock values. */
function jobUpdate(w: JobWrite): Prisma.Sql | null {
  const s = w.set
  const sets: Prisma.Sql[] = []
  if (s.status !== undefined) sets.push(Prisma.sql`status = ${s.status}::"JobStatus"`)
  if (s.stageNow !== undefined) sets.push(Prisma.sql`stage_now = ${s.stageNow}`)
  if (s.startedAt !== undefined) sets.push(Prisma.sql`started_at = ${iso(s.startedAt)}::timestamp(3)`)
  if (s.completedAt !== undefined) sets.push(Prisma.sql`completed_at = ${iso(s.completedAt)}::timestamp(3)`)
  if (s.creditsUsed !== undefined) sets.push(Prisma.sql`credits_used = ${s.creditsUsed}::int`)
  if (s.failedStage !== undefined) sets.push(Prisma.sql`failed_stage = ${s.failedStage}`)
  if (s.errorCode !== undefined) sets.push(Prisma.sql`error_code = ${s.errorCode}`)
  if (s.errorMessage !== undefined) sets.push(Prisma.sql`error_message = ${s.errorMessage}`)
  if (sets.length === 0) return null
  return Prisma.sql`UPDATE jobs SET ${Prisma.join(sets, ', ')} WHERE id = ${w.id} AND status = ${w.status}::"JobStatus"`
}
