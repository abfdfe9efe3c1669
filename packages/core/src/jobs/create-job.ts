import { creditsForPages, DomainError, newId } from '@quire/domain'
import type { Db, JobFile, StageRun } from '@quire/db'
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
  const stageRuns: StageRun[] = [
    {
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
    },
  ]
  let accepted: JobView
  try {
    accepted = await opts.db.$transaction(async (tx) => {
      const row = await tx.job.create({
        data: {
          id: jobId,
          workspaceId: opts.workspaceId,
          pipelineId: opts.pipeline.pipelineId,
          pipelineVersion: opts.pipeline.version,
          definition: opts.pipeline.definition as object,
          status: 'queued',
          stageNow: 'initialization',
          priority: opts.options.priority,
          executionMode: opts.options.executionMode,
          environment: opts.options.environment,
          sourceTag: opts.options.sourceTag ?? null,
          clientReferenceId: opts.options.clientReferenceId ?? null,
          schemaId: opts.options.schemaId ?? null,
          metadata: opts.options.metadata ?? undefined,
          waitForReview: opts.options.waitForReview ?? false,
          pageCount,
          creditsReserved: credits,
          files: { create: files.map(({ jobId: _, ...f }) => f) },
          stageRuns: { create: stageRuns.map(({ jobId: _, ...r }) => r) },
        },
      })
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
      // once the transaction commits. Its relations are the rows written above, so nothing is read back.
      return toJobView({ ...row, files, documents: [], stageRuns })
    })
  } catch (err) {
    await Promise.all(stored.map((f) => opts.blobs.delete(f.blobKey)))
    throw err
  }
  return { jobId, accepted }
}
