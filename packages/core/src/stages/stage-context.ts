import type { PipelineDefinition, WorkerStage } from '@quire/domain'
import type { Db, Tx } from '@quire/db'
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

/**
 * The same, inside an interactive transaction. Relations are read one query after another rather than with a Prisma
 * `include` or at once: inside an interactive transaction an include runs its child queries concurrently on the one
 * connection (prisma/orm#29468), which pg 8 only warns about and pg 9 refuses.
 */
export async function loadJobForStageInTx(tx: Tx, jobId: string): Promise<LoadedJob | null> {
  const job = await tx.job.findUnique({ where: { id: jobId } })
  if (!job) return null
  const files = await tx.jobFile.findMany({ where: { jobId }, orderBy: { position: 'asc' } })
  const documents = await tx.document.findMany({ where: { jobId }, orderBy: { id: 'asc' } })
  const stageRuns = await tx.stageRun.findMany({ where: { jobId } })
  return { ...job, files, documents, stageRuns }
}

export type StageContext = {
  deps: StageDeps
  job: LoadedJob
  definition: PipelineDefinition
}

/** What a stage produced: written in the exit transaction together with the stage's completion. */
export type StageOutput = {
  apply?: (tx: Tx) => Promise<void>
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
