import { creditsForPages, DomainError, newId } from '@quire/domain'
import type { Db, Job, JobFile, StageRun, Tx } from '@quire/db'
import { reserveCredits } from '@quire/ledger'
import { outbox, type Priority } from '@quire/queues'
import type { BlobStore } from '@quire/storage'
import { recordEvents } from '../events/record-event.ts'
import type { ResolvedPipeline } from '../pipelines/pipelines.ts'
import type { InspectedFile } from './inspect-files.ts'
import { toJobView, type JobView } from './job-view.ts'

export type JobOptions = {
  priority: Priority
  executionMode: 'async' | 'sync'
  environment: 'production' | 'test'
  sourceTag?: string | null
  clientReferenceId?: string | null
  schemaId?: string | null
  metadata?: Record<string, string> | null
  /**
   * Pause in `awaiting_review` while a document is parked for review. A property of the workspace's API profile
   * (the edge passes it); the domain only follows it.
   */
  waitForReview?: boolean
}

/**
 * Creates one job from one or more inspected files: stores the files, then in one transaction writes the job, queues
 * its first stage through the outbox and reserves credits. No credits, no job.
 *
 * Every submission runs this, so the transaction is four statements between BEGIN and COMMIT: one INSERT with
 * data-modifying CTEs (the job, its files, its `source` stage run), the `stage.exited` event, the outbox row of
 * `initialization` and the reservation. Nothing is read back: the rows are built here with every column given
 * explicitly.
 */
export async function createJob(opts: {
  db: Db
  blobs: BlobStore
  workspaceId: string
  pipeline: ResolvedPipeline
  files: InspectedFile[]
  options: JobOptions
}): Promise<{ jobId: string; accepted: JobView }> {
  const jobId = newId('job')
  const pageCount = opts.files.reduce((n, f) => n + f.pageCount, 0)
  const credits = creditsForPages(pageCount, opts.pipeline.definition.credits.per_page)
  const stored = opts.files.map((f, position) => ({
    ...f,
    position,
    blobKey: `${opts.workspaceId}/${jobId}/${position}`,
  }))
  for (const f of stored) await opts.blobs.putFile(f.blobKey, f.tempPath)
  // Every column given explicitly (no database defaults), so these objects are exactly the rows written.
  const now = new Date()
  const job: Job = {
    id: jobId,
    workspaceId: opts.workspaceId,
    pipelineId: opts.pipeline.pipelineId,
    pipelineVersion: opts.pipeline.version,
    definition: opts.pipeline.definition as Job['definition'],
    status: 'queued',
    stageNow: 'initialization',
    failedStage: null,
    errorCode: null,
    errorMessage: null,
    priority: opts.options.priority,
    executionMode: opts.options.executionMode,
    environment: opts.options.environment,
    sourceTag: opts.options.sourceTag ?? null,
    clientReferenceId: opts.options.clientReferenceId ?? null,
    schemaId: opts.options.schemaId ?? null,
    metadata: opts.options.metadata ?? null,
    pageCount,
    creditsReserved: credits,
    creditsUsed: null,
    degradationReason: null,
    createdAt: now,
    startedAt: null,
    completedAt: null,
    expiredAt: null,
    waitForReview: opts.options.waitForReview ?? false,
    errorGroupId: null,
  }
  const files: JobFile[] = stored.map((f) => ({
    id: newId('file'),
    jobId,
    position: f.position,
    fileName: f.fileName,
    fileType: f.fileType,
    mimeType: f.mimeType,
    sizeBytes: f.sizeBytes,
    pageCount: f.pageCount,
    blobKey: f.blobKey,
  }))
  const source: StageRun = {
    id: newId('run'),
    jobId,
    stage: 'source',
    status: 'completed',
    attempts: 1,
    credits: 0,
    error: null,
    startedAt: now,
    completedAt: now,
    ms: 0,
    cpuMs: null,
    continuedInline: false,
  }
  let accepted: JobView
  try {
    accepted = await opts.db.$transaction(async (tx) => {
      await insertJob(tx, { job, files, source })
      await recordEvents(tx, [
        { workspaceId: opts.workspaceId, jobId, type: 'stage.exited', stage: 'source', transition: 'exited' },
      ])
      await outbox.stage(tx, { stage: 'initialization', jobId }, { priority: opts.options.priority })
      // The reservation comes last: its UPDATE locks the workspace's balance row until COMMIT, and every submission
      // to the workspace waits for that lock, so it is held for one statement instead of the whole transaction. A
      // refusal still rolls back everything above: no credits, no job.
      const hold = await reserveCredits(tx, { workspaceId: opts.workspaceId, jobId, amount: credits })
      if (!hold.ok) {
        throw new DomainError(
          'PAYMENT_REQUIRED',
          hold.reason === 'spending_cap'
            ? `this job (${credits} credits) would exceed the workspace spending cap`
            : `this job needs ${credits} credits; not enough credits available`,
          { required: credits },
        )
      }
      // The job as accepted (`queued`): the answer to the submission describes this state, whatever a worker does
      // once the transaction commits. Its rows are the ones written above, so nothing is read back.
      return toJobView({ ...job, files, documents: [], stageRuns: [source] })
    })
  } catch (err) {
    await Promise.all(stored.map((f) => opts.blobs.delete(f.blobKey)))
    throw err
  }
  return { jobId, accepted }
}

/**
 * One statement, one round trip: the job, its files and its `source` stage run (a nested Prisma create is three
 * INSERTs and a SELECT). Foreign keys are checked at the end of the statement, when the job row exists. Timestamps are
 * UTC wall-clock values in `timestamp` columns, as Prisma writes them (the cast ignores the zone of an ISO string).
 */
async function insertJob(tx: Tx, rows: { job: Job; files: JobFile[]; source: StageRun }): Promise<void> {
  const { job, files, source } = rows
  const at = (d: Date | null) => d?.toISOString() ?? null
  const json = (v: unknown) => (v === null ? null : JSON.stringify(v))
  await tx.$executeRaw`
    WITH job AS (
      INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, stage_now, failed_stage,
                        error_code, error_message, priority, execution_mode, environment, source_tag,
                        client_reference_id, schema_id, metadata, page_count, credits_reserved, credits_used,
                        degradation_reason, created_at, started_at, completed_at, expired_at, wait_for_review,
                        error_group_id)
      VALUES (${job.id}, ${job.workspaceId}, ${job.pipelineId}, ${job.pipelineVersion}::int,
              ${json(job.definition)}::jsonb, ${job.status}::"JobStatus", ${job.stageNow}, ${job.failedStage},
              ${job.errorCode}, ${job.errorMessage}, ${job.priority}, ${job.executionMode}, ${job.environment},
              ${job.sourceTag}, ${job.clientReferenceId}, ${job.schemaId}, ${json(job.metadata)}::jsonb,
              ${job.pageCount}::int, ${job.creditsReserved}::int, ${job.creditsUsed}::int, ${job.degradationReason},
              ${at(job.createdAt)}::timestamp(3), ${at(job.startedAt)}::timestamp(3),
              ${at(job.completedAt)}::timestamp(3), ${at(job.expiredAt)}::timestamp(3), ${job.waitForReview},
              ${job.errorGroupId})
    ), files AS (
      INSERT INTO job_files (id, job_id, position, file_name, file_type, mime_type, size_bytes, page_count, blob_key)
      SELECT f.id, f."jobId", f.position, f."fileName", f."fileType", f."mimeType", f."sizeBytes", f."pageCount",
             f."blobKey"
      FROM jsonb_to_recordset(${JSON.stringify(files)}::jsonb) AS f(
        id text, "jobId" text, position int, "fileName" text, "fileType" text, "mimeType" text, "sizeBytes" int,
        "pageCount" int, "blobKey" text)
    )
    INSERT INTO stage_runs (id, job_id, stage, status, attempts, credits, error, started_at, completed_at, ms, cpu_ms,
                            continued_inline)
    VALUES (${source.id}, ${source.jobId}, ${source.stage}, ${source.status}::"StageRunStatus",
            ${source.attempts}::int, ${source.credits}::int, ${source.error}, ${at(source.startedAt)}::timestamp(3),
            ${at(source.completedAt)}::timestamp(3), ${source.ms}::int, ${source.cpuMs}::int,
            ${source.continuedInline})`
}
