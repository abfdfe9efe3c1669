import { creditsForPages, DomainError, MAX_CREDITS, newId } from '@quire/domain'
import type { Db, Job, JobFile } from '@quire/db'
import { explainReservationRefusal } from '@quire/ledger'
import { type OutboxRow, outboxRowsOf, type Priority } from '@quire/queues'
import type { BlobStore } from '@quire/storage'
import { eventRow } from '../events/record-event.ts'
import { failJob } from '../stages/run-stage.ts'
import type { ResolvedPipeline } from '../pipelines/pipelines.ts'
import { type KeyState, PrincipalChanged } from '../workspaces/api-keys.ts'
import type { InspectedFile } from './inspect-files.ts'
import { type Submitted, submissionGroups } from './submission-groups.ts'
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
 * Creates one job from one or more inspected files: stores the files while one statement writes the job, queues its
 * first stage through the outbox and reserves credits. No credits, no job.
 *
 * The files are moved into the store during the statement rather than before it: a submission waits for the longer of
 * the two instead of both (a rename's trip through libuv's pool, an upload to S3; paired runs at one connection against
 * moving first: +1% to +19%, bench/README.md, 2026-12-06 15:20). Nothing can run the job before both are done: its
 * first stage goes to BullMQ after this returns, and the relay leaves its outbox row alone for
 * DIRECT_DISPATCH_GRACE_MS. A statement that refuses or fails has its files removed from the store (or given back, for
 * PrincipalChanged) once their moves are over. A job written whose file could not be stored is failed at once
 * (`file_not_stored`, its hold released) and the move's error thrown: the caller never hears of the job, as when a
 * process dies between the two, where initialization fails the job for its missing file.
 *
 * Every submission runs this, so the write goes with the workspace's other submissions of the moment
 * (submission-groups.ts): one call of the PL/pgSQL function `submit_jobs` (migration `*_submit_jobs_grouped`) in
 * autocommit writes the job, its files, the `stage.exited` event of `source` (and its fan-out when the workspace has
 * a webhook), the outbox row of `initialization`, and last the reservation (the hold); a refusal leaves none of it.
 * The `source` stage ends as the job is created: it has its event and no stage run (`*_source_stage_not_recorded`).
 * Nothing is read back: the rows are built here with every column given explicitly. The caller sends `dispatch` (the
 * first stage's outbox row) to BullMQ itself after this returns (DirectDispatch); if it never does, the relay takes
 * the row over after DIRECT_DISPATCH_GRACE_MS.
 *
 * With `confirmKey`, the statement first confirms that the API key still has the principal the caller read (a
 * principal from an earlier request, RecentPrincipals); if it does not, nothing is written, the files go back to
 * their temporary paths and PrincipalChanged is thrown, for the caller to read the key afresh and start over.
 */
export async function createJob(opts: {
  db: Db
  blobs: BlobStore
  workspaceId: string
  pipeline: ResolvedPipeline
  files: InspectedFile[]
  options: JobOptions
  confirmKey?: KeyState | null
}): Promise<{ jobId: string; accepted: JobView; dispatch: OutboxRow[] }> {
  const jobId = newId('job')
  const pageCount = opts.files.reduce((n, f) => n + f.pageCount, 0)
  const credits = creditsForPages(pageCount, opts.pipeline.definition.credits.per_page)
  if (credits > MAX_CREDITS) {
    throw new DomainError(
      'PAYMENT_REQUIRED',
      `this job needs ${credits} credits; a balance holds at most ${MAX_CREDITS}`,
      {
        required: credits,
      },
    )
  }
  const stored = opts.files.map((f, position) => ({
    ...f,
    position,
    blobKey: blobKeyFor(opts.workspaceId, jobId, position),
  }))
  const moves = Promise.allSettled(stored.map((f) => opts.blobs.putFile(f.blobKey, f.tempPath)))
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
    // Where the statement of a lone submission keeps the job's one file and its pending hold instead of their own
    // rows (SubmissionGroups); this object carries the file in `files` and the hold is the reservation's.
    fileName: null,
    fileType: null,
    mimeType: null,
    sizeBytes: null,
    blobKey: null,
    holdPeriod: null,
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
  const event = eventRow(
    { workspaceId: opts.workspaceId, jobId, type: 'stage.exited', stage: 'source', transition: 'exited' },
    now,
  )
  const [fanoutRow] = outboxRowsOf('fanout', [{ eventId: event.id }])
  const [stageRow] = outboxRowsOf('stage', [{ stage: 'initialization', jobId }], { priority: opts.options.priority })
  let submitted: Submitted
  try {
    submitted = await submissionGroups(opts.db).submit({
      job,
      definitionJson: opts.pipeline.definitionJson,
      files,
      event,
      fanout: fanoutRow!,
      stage: stageRow!,
      confirmKey: opts.confirmKey ?? null,
    })
  } catch (err) {
    await moves
    await Promise.all(stored.map((f) => opts.blobs.delete(f.blobKey)))
    throw err
  }
  const moved = await moves
  if (submitted.answer === 'key_changed') {
    // A file whose move failed is still at its temporary path; a copy it may have left in the store goes.
    await Promise.all(
      stored.map((f, i) =>
        moved[i]!.status === 'fulfilled' ? opts.blobs.takeFile(f.blobKey, f.tempPath) : opts.blobs.delete(f.blobKey),
      ),
    )
    throw new PrincipalChanged()
  }
  if (submitted.answer === 'held') {
    const failed = moved.find((m) => m.status === 'rejected')
    if (failed) {
      await failJob(
        { db: opts.db },
        { jobId, code: 'file_not_stored', message: 'the uploaded file could not be stored' },
      )
      throw failed.reason
    }
  } else {
    await Promise.all(stored.map((f) => opts.blobs.delete(f.blobKey)))
    // Refused inside the statement, against what the jobs before it left; `exists` and `missing` are explained by a
    // read (a hold already there, or the workspace gone).
    const reason =
      submitted.answer === 'insufficient_credits' || submitted.answer === 'spending_cap'
        ? submitted.answer
        : await explainReservationRefusal(opts.db, { workspaceId: opts.workspaceId, jobId, amount: credits }).then(
            (why) => (why.ok ? 'insufficient_credits' : why.reason),
          )
    throw new DomainError(
      'PAYMENT_REQUIRED',
      reason === 'spending_cap'
        ? `this job (${credits} credits) would exceed the workspace spending cap`
        : `this job needs ${credits} credits; not enough credits available`,
      { required: credits },
    )
  }
  // The job as accepted (`queued`): the answer to the submission describes this state, whatever a worker does once
  // the statement committed. Its rows are the ones written above, so nothing is read back.
  return {
    jobId,
    accepted: toJobView({ ...job, files, documents: [], stageRuns: [] }),
    dispatch: [{ ...stageRow!, id: BigInt(submitted.stageRowId!) }],
  }
}

/**
 * Where a job's file is stored: a workspace's files spread over 256 directories by the job id's last two (random hex)
 * characters, so a store on a filesystem makes a bounded set of directories instead of one per job.
 */
export const blobKeyFor = (workspaceId: string, jobId: string, position: number) =>
  `${workspaceId}/${jobId.slice(-2)}/${jobId}-${position}`

/**
 * The key format `blobKeyFor` makes: `<workspace>/<last two hex of the job id>/<job id>-<position>`, and the page
 * images kept beside a file (`.page-<n>.png`, documents/get-document-page.ts).
 */
const JOB_FILE_KEY = /^[^/]+\/[0-9a-f]{2}\/(job_[0-9a-f]+)-\d+(?:\.page-\d+\.png)?$/

/** The job a stored file belongs to, from its key; undefined for a key Quire did not make. */
export function jobIdOfBlobKey(key: string): string | undefined {
  const m = JOB_FILE_KEY.exec(key)
  return m && key.split('/')[1] === m[1]!.slice(-2) ? m[1] : undefined
}
