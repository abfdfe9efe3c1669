import type { PipelineDefinition, WorkerStage } from '@quire/domain'
import type { Db } from '@quire/db'
import type { OcrEngine, ParsePool } from '@quire/extraction'
import type { BlobStore, Destinations } from '@quire/storage'
import type { EventInput } from '../events/record-event.ts'

export type StageDeps = {
  db: Db
  blobs: BlobStore
  ocr: OcrEngine
  /** Child processes that parse documents (PDF, rasterising, OCR) off the event loop; in-process when absent. */
  parsePool?: ParsePool
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

export type LoadedJob = NonNullable<Awaited<ReturnType<typeof loadJobForStage>>>
export type LoadedDocument = LoadedJob['documents'][number]

/**
 * The job with its files, documents and stage runs, read outside a transaction: the four reads are independent
 * statements on pool connections, run at once, so a stage waits one round trip instead of four.
 */
export async function loadJobForStage(db: Db, jobId: string) {
  const [job, files, documents, stageRuns] = await Promise.all([
    db.job.findUnique({ where: { id: jobId } }),
    db.jobFile.findMany({ where: { jobId }, orderBy: { position: 'asc' } }),
    db.document.findMany({ where: { jobId }, orderBy: { id: 'asc' } }),
    db.stageRun.findMany({ where: { jobId } }),
  ])
  return job ? { ...job, files, documents, stageRuns } : null
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
