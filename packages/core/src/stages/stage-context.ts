import type { PipelineDefinition, WorkerStage } from '@quire/domain'
import { type Db, type Document, directQuery, type Job, type Prisma, type StageRun } from '@quire/db'
import type { OcrEngine, ParsePool } from '@quire/extraction'
import type { BlobStore, Destinations } from '@quire/storage'
import type { EventInput } from '../events/record-event.ts'
import { jobFilesOf, type StoredFile } from '../jobs/job-files.ts'

export type StageDeps = {
  db: Db
  blobs: BlobStore
  ocr: OcrEngine
  /** Child processes that parse documents (PDF, rasterising, OCR) off the event loop; in-process when absent. */
  parsePool?: ParsePool
  /**
   * With a parse pool: a PDF of at most two pages and this many bytes has its text layer read in-process, and goes to
   * the pool only when a page needs OCR (QUIRE_PARSE_INLINE_MAX_BYTES; default 256 KiB; 0: never).
   */
  parseInlineMaxBytes?: number
  /** Operator-configured result destinations (QUIRE_DESTINATIONS); none configured when absent. */
  destinations?: Destinations
  /** Called after a transaction that wrote outbox rows committed, so the relay can run at once. */
  onCommit?: () => void
  /**
   * A stage that ran this long (ms) is committed as soon as it ends, even when the next one runs in this process
   * (QUIRE_STAGE_CHECKPOINT_MS; default 1000). 0 commits after every stage.
   */
  checkpointMs?: number
}

export type LoadedJob = Job & { files: StoredFile[]; documents: Document[]; stageRuns: StageRun[] }
export type LoadedDocument = LoadedJob['documents'][number]

type Row = Record<string, unknown>
/** A `timestamp(3)` column as to_jsonb writes it (UTC wall-clock, no zone, as Prisma stores it) to a Date. */
const date = (v: unknown) => new Date(`${v as string}Z`)
const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : date(v))
const str = (v: unknown) => v as string
const strOrNull = (v: unknown) => (v ?? null) as string | null
const num = (v: unknown) => v as number
const numOrNull = (v: unknown) => (v ?? null) as number | null
const json = (v: unknown) => (v ?? null) as Prisma.JsonValue

/**
 * The job with its files, documents (in id order) and stage runs, read outside a transaction in one statement: the
 * rows come back as JSON and are mapped here to the types Prisma's own reads give (every column, timestamps as
 * Dates), so a stage waits one round trip and the worker pays for one statement instead of four.
 */
export async function loadJobForStage(db: Db, jobId: string): Promise<LoadedJob | null> {
  // A prepared statement sent without Prisma (its interpreter cost about as much CPU as the statement, once per job);
  // every column is inside jsonb, read by the helpers below, so the driver's own type parsing plays no part.
  const [row] = await directQuery<{ job: Row; files: Row[]; documents: Row[]; stage_runs: Row[] }>(db, {
    name: 'load_job_for_stage',
    text: `SELECT to_jsonb(j) AS job,
      (SELECT coalesce(jsonb_agg(to_jsonb(f) ORDER BY f.position), '[]') FROM job_files f WHERE f.job_id = j.id)
        AS files,
      (SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY d.id), '[]') FROM documents d WHERE d.job_id = j.id)
        AS documents,
      (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') FROM stage_runs r WHERE r.job_id = j.id) AS stage_runs
    FROM jobs j WHERE j.id = $1`,
    values: [jobId],
  })
  if (!row) return null
  const j = row.job
  const job: Job = {
    id: str(j.id),
    workspaceId: str(j.workspace_id),
    pipelineId: str(j.pipeline_id),
    pipelineVersion: num(j.pipeline_version),
    definition: json(j.definition) as Prisma.JsonValue,
    status: str(j.status) as Job['status'],
    stageNow: strOrNull(j.stage_now),
    failedStage: strOrNull(j.failed_stage),
    errorCode: strOrNull(j.error_code),
    errorMessage: strOrNull(j.error_message),
    priority: str(j.priority),
    executionMode: str(j.execution_mode),
    environment: str(j.environment),
    sourceTag: strOrNull(j.source_tag),
    clientReferenceId: strOrNull(j.client_reference_id),
    schemaId: strOrNull(j.schema_id),
    metadata: json(j.metadata),
    pageCount: num(j.page_count),
    creditsReserved: num(j.credits_reserved),
    creditsUsed: numOrNull(j.credits_used),
    degradationReason: strOrNull(j.degradation_reason),
    createdAt: date(j.created_at),
    startedAt: dateOrNull(j.started_at),
    completedAt: dateOrNull(j.completed_at),
    expiredAt: dateOrNull(j.expired_at),
    waitForReview: j.wait_for_review as boolean,
    errorGroupId: strOrNull(j.error_group_id),
    fileName: strOrNull(j.file_name),
    fileType: strOrNull(j.file_type),
    mimeType: strOrNull(j.mime_type),
    sizeBytes: numOrNull(j.size_bytes),
    blobKey: strOrNull(j.blob_key),
    holdPeriod: j.hold_period == null ? null : date(`${j.hold_period as string}T00:00:00`),
  }
  return {
    ...job,
    // Its `job_files` rows, or the one file kept in the job row.
    files: jobFilesOf({
      ...job,
      files: row.files.map(
        (f): StoredFile => ({
          position: num(f.position),
          fileName: str(f.file_name),
          fileType: str(f.file_type),
          mimeType: str(f.mime_type),
          sizeBytes: num(f.size_bytes),
          pageCount: num(f.page_count),
          blobKey: str(f.blob_key),
        }),
      ),
    }),
    documents: row.documents.map(
      (d): Document => ({
        id: str(d.id),
        jobId: str(d.job_id),
        parentId: strOrNull(d.parent_id),
        filePosition: num(d.file_position),
        status: str(d.status),
        type: strOrNull(d.type),
        schemaId: strOrNull(d.schema_id),
        pages: (d.pages ?? []) as number[],
        metadata: json(d.metadata),
        content: json(d.content),
        data: json(d.data),
        errorCode: strOrNull(d.error_code),
        errorMessage: strOrNull(d.error_message),
        createdAt: date(d.created_at),
        updatedAt: date(d.updated_at),
      }),
    ),
    stageRuns: row.stage_runs.map(
      (r): StageRun => ({
        id: str(r.id),
        jobId: str(r.job_id),
        stage: str(r.stage),
        status: str(r.status) as StageRun['status'],
        attempts: num(r.attempts),
        credits: num(r.credits),
        error: strOrNull(r.error),
        startedAt: date(r.started_at),
        completedAt: dateOrNull(r.completed_at),
        ms: numOrNull(r.ms),
        cpuMs: numOrNull(r.cpu_ms),
        continuedInline: r.continued_inline as boolean,
      }),
    ),
  }
}

export type StageContext = {
  deps: StageDeps
  job: LoadedJob
  definition: PipelineDefinition
}

/** A document a stage creates; inserted unless a document with its id exists (a re-run keeps the first). */
export type NewDocument = {
  id: string
  parentId?: string | null
  filePosition: number
  status: string
  type?: string | null
  schemaId?: string | null
  pages: number[]
  metadata?: unknown
  content?: unknown
}

/** Fields of an existing document a stage changes. */
export type DocumentChanges = {
  status?: string
  type?: string | null
  schemaId?: string | null
  content?: unknown
  data?: unknown
  errorCode?: string | null
  errorMessage?: string | null
}

/**
 * A stage's change to one document. Stages describe their writes instead of making them: the runner applies them
 * to the job the next stage sees and writes them at the next durable checkpoint (see runStages).
 */
export type DocumentWrite = { create: NewDocument } | { update: string; set: DocumentChanges }

/** A line in a document's own history (`document_events`). */
export type DocumentNote = { documentId: string; type: string; data?: Record<string, unknown> }

/** What a stage produced: written at the stage's exit, together with its completion. */
export type StageOutput = {
  documents?: DocumentWrite[]
  notes?: DocumentNote[]
  events?: EventInput[]
  credits?: number
  /** Documents this stage failed on (the job goes on with the others). */
  failedDocuments?: { documentId: string; code: string; message: string }[]
  /** CPU time spent outside this process for the stage (the parse processes); added to the stage's own. */
  cpuMs?: number
  /** The job pauses in `awaiting_review` after this stage instead of queueing the next one. */
  holdForReview?: boolean
}

export type StageExecutor = {
  stage: WorkerStage
  /** The documents whose per-document events this stage fires (none for job-level stages). */
  documentsFor(job: LoadedJob): LoadedDocument[]
  /** False: the stage is skipped (no events, recorded as skipped). */
  enabled?(definition: PipelineDefinition): boolean
  run(ctx: StageContext): Promise<StageOutput>
  /**
   * True when a re-run of this stage for this job would be expensive (many pages, OCR): the runner then commits
   * before the stage starts and after it ends, so its progress is visible and a crash does not redo it.
   */
  costly?(job: LoadedJob): boolean
}

export const rootDocuments = (job: LoadedJob) =>
  job.documents.filter((d) => d.parentId === null && d.status !== 'failed')

/** Leaf documents: those not split into children. */
export function leafDocuments(job: LoadedJob): LoadedDocument[] {
  const parents = new Set(job.documents.map((d) => d.parentId).filter(Boolean))
  return job.documents.filter((d) => !parents.has(d.id) && d.status !== 'failed')
}

export const documentText = (doc: LoadedDocument): string => {
  const content = doc.content as { pages?: string[] } | null
  return (content?.pages ?? []).join('\n\n')
}
