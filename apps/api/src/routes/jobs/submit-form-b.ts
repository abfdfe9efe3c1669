import { awaitJobs, createJob, degradeSyncJobs, getJob, intakeFile, type JobView, resolvePipeline } from '@quire/core'
import { DomainError, isDomainError, isFinalStatus } from '@quire/domain'
import { resolveSchema } from '@quire/extraction'
import { type FormBSubmitFields, presentFormBJob, presentFormBSubmitted } from '@quire/forms'
import { baseUrl } from '../../http/context.ts'
import { filesOf, refusedFileOf, tempFileMoved, toUploaded } from '../../http/multipart.ts'
import type { RouteInput, RouteReply } from '../route.ts'

const SYNC_DEGRADED = 'sync_budget_exceeded'

/**
 * The refusal of a later file (too large, of a type the pipeline does not take, past the balance, ...), its details
 * naming the jobs already created for the files before it (they stand, spec Form B responses item 4), in upload
 * order: without them a client could not tell which of its files ran.
 */
const namingCreatedJobs = (refused: DomainError, jobIds: string[]): DomainError =>
  new DomainError(refused.code, refused.message, { ...refused.details, created_job_ids: jobIds })

/** Form B: each `files` part becomes its own job, created in upload order. */
export async function submitFormB({
  ctx,
  deps,
  principal,
  confirmKey,
  profile,
  body: fields,
}: RouteInput<unknown, FormBSubmitFields>): Promise<RouteReply> {
  const started = Date.now()
  // Temporary files are the multipart middleware's: it removes whatever the jobs did not move to blob storage.
  const files = filesOf(ctx as never, 'files')
  // A file cut off at the size limit: the files before it still become jobs (with every text parameter of the
  // request, those sent after it included), then the response is its 413, naming them.
  const refused = refusedFileOf(ctx as never)
  if (files.length === 0) {
    throw refused ? namingCreatedJobs(refused, []) : new DomainError('MISSING_PART', 'no `files` part in the request')
  }
  const pipeline = await resolvePipeline({
    db: deps.db,
    workspaceId: principal.workspaceId,
    requestedPipelineId: fields.pipeline_id,
    boundPipelineId: principal.boundPipelineId,
    workspaceDefaultPipelineId: principal.workspaceDefaultPipelineId,
    defaultRun: principal.defaultRun,
    version: fields.pipeline_version ?? null,
    allowDraftVersion: true,
  })
  if (fields.schema_id && !resolveSchema(fields.schema_id, pipeline.definition.schemas)) {
    throw new DomainError('INVALID_PARAMETER', `schema_id ${fields.schema_id} is not defined by the pipeline`)
  }
  const jobIds: string[] = []
  const accepted: JobView[] = []
  for (const f of files) {
    // A principal read on an earlier request is confirmed by the first write (once a job stands, it was).
    const confirming = jobIds.length === 0 ? confirmKey : null
    try {
      const inspected = await intakeFile({
        db: deps.db,
        workspaceId: principal.workspaceId,
        file: toUploaded(f),
        definition: pipeline.definition,
        formTypes: profile.uploadTypes,
        confirmKey: confirming,
      })
      const created = await createJob({
        db: deps.db,
        blobs: deps.blobs,
        workspaceId: principal.workspaceId,
        pipeline,
        files: [inspected],
        options: {
          priority: fields.priority,
          executionMode: fields.mode,
          environment: fields.environment,
          clientReferenceId: fields.client_reference_id ?? null,
          schemaId: fields.schema_id ?? null,
          waitForReview: profile.jobWaitsForReview,
        },
        confirmKey: confirming,
      })
      tempFileMoved(ctx, f)
      jobIds.push(created.jobId)
      accepted.push(created.accepted)
      deps.dispatchOutbox(created.dispatch)
    } catch (err) {
      // A later file's rejection leaves the jobs already created for earlier files standing, and names them.
      if (jobIds.length > 0 && isDomainError(err)) throw namingCreatedJobs(err, jobIds)
      throw err
    }
  }
  if (refused) throw namingCreatedJobs(refused, jobIds)
  const read = (jobId: string) => getJob({ db: deps.db, workspaceId: principal.workspaceId, jobId })
  const base = baseUrl(ctx, deps)
  if (fields.mode === 'async') {
    // Each job as it was accepted (`queued`, read in the transaction that created it): a worker may already have
    // picked it up, the answer still describes the accepted job.
    return { status: 202, body: accepted.map((j) => presentFormBSubmitted(j, base)) }
  }
  const allDone = await awaitJobs({ db: deps.db, jobIds, deadline: started + deps.config.syncWindowMs })
  if (!allDone) await degradeSyncJobs({ db: deps.db, jobIds, reason: SYNC_DEGRADED })
  const jobs: JobView[] = await Promise.all(jobIds.map(read))
  return {
    status: allDone ? 200 : 202,
    body: jobs.map((j) =>
      isFinalStatus(j.status) ? presentFormBJob(j, { stages: true, result: true }) : presentFormBSubmitted(j, base),
    ),
  }
}
