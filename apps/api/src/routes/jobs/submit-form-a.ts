import { createJob, intakeFile, type InspectedFile, type KeyState, resolvePipeline } from '@quire/core'
import { DomainError } from '@quire/domain'
import { type FormASubmitFields, parseMetadata, presentFormAJobCreated } from '@quire/forms'
import type { AppDeps } from '../../http/context.ts'
import { filesOf, tempFileMoved, toUploaded } from '../../http/multipart.ts'
import type { RouteInput, RouteReply } from '../route.ts'

/** Form A: all `file` parts form one job (a batch) answered by one 202 object. */
export async function submitFormA({
  ctx,
  deps,
  principal,
  confirmKey,
  profile,
  body,
}: RouteInput<unknown, FormASubmitFields>) {
  // Temporary files are the multipart middleware's: it removes whatever the job did not move to blob storage.
  const files = filesOf(ctx as never, 'file')
  const metadata = parseMetadata(body.metadata)
  if (files.length === 0) throw new DomainError('MISSING_PART', 'no `file` part in the request')
  const pipeline = await resolveFormAPipeline(deps, principal.workspaceId, body.pipeline_id, body.version, profile)
  const inspected = []
  for (const f of files) {
    inspected.push(
      await intakeFile({
        db: deps.db,
        workspaceId: principal.workspaceId,
        file: toUploaded(f),
        definition: pipeline.definition,
        formTypes: profile.uploadTypes,
        confirmKey,
      }),
    )
  }
  const reply = await createFormAJob(deps, principal.workspaceId, pipeline, inspected, {
    ...body,
    metadata,
    waitForReview: profile.jobWaitsForReview,
    confirmKey,
  })
  for (const f of files) tempFileMoved(ctx, f)
  return reply
}

/** Form A `pipeline_id` and optional `version` ("v<n>") to a published pipeline version. */
export async function resolveFormAPipeline(
  deps: AppDeps,
  workspaceId: string,
  pipelineId: string,
  rawVersion: string | undefined,
  profile: RouteInput['profile'],
) {
  let version: number | null = null
  if (rawVersion !== undefined) {
    version = profile.parseVersion(rawVersion)
    if (version === null) throw new DomainError('INVALID_PARAMETER', 'version must look like v<number>')
  }
  return resolvePipeline({
    db: deps.db,
    workspaceId,
    requestedPipelineId: pipelineId,
    version,
    allowDraftVersion: false,
  })
}

/** One job for every inspected file of a Form A request (multipart or bucket reference), answered 202. */
export async function createFormAJob(
  deps: AppDeps,
  workspaceId: string,
  pipeline: Awaited<ReturnType<typeof resolvePipeline>>,
  files: InspectedFile[],
  fields: {
    source_tag?: string
    metadata: Record<string, string> | null
    run_kind: 'prod' | 'test'
    waitForReview: boolean
    /** A principal read on an earlier request, confirmed by the job's statement (RouteInput.confirmKey). */
    confirmKey: KeyState | null
  },
): Promise<RouteReply> {
  const { accepted, dispatch } = await createJob({
    db: deps.db,
    blobs: deps.blobs,
    workspaceId,
    pipeline,
    files,
    options: {
      priority: 'standard',
      executionMode: 'async',
      environment: fields.run_kind === 'test' ? 'test' : 'production',
      sourceTag: fields.source_tag ?? null,
      metadata: fields.metadata,
      waitForReview: fields.waitForReview,
    },
    confirmKey: fields.confirmKey,
  })
  deps.dispatchOutbox(dispatch)
  // The job as accepted, whatever a worker has done with it since.
  return { status: 202, body: presentFormAJobCreated(accepted) }
}
