import {
  awaitJobs,
  createJob,
  degradeSyncJobs,
  discardUploads,
  getJob,
  intakeFile,
  resolvePipeline,
  type JobView,
} from '@quire/core'
import { DomainError, isFinalStatus } from '@quire/domain'
import { resolveSchema } from '@quire/extraction'
import { presentFormBJob, presentFormBSubmitted } from '@quire/forms'
import { z } from 'zod'
import { baseUrl, type AppDeps, type Ctx } from '../../http/context.ts'
import { fieldsOf, filesOf, toUploaded } from '../../http/multipart.ts'
import { first, parseInput } from '../../http/validate.ts'

export const FormBSubmitFields = z.object({
  pipeline_id: z.string().min(1).optional(),
  pipeline_version: z
    .string()
    .regex(/^\d{1,9}$/, 'pipeline_version must be a positive integer')
    .transform(Number)
    .optional(),
  schema_id: z.string().min(1).max(200).optional(),
  priority: z.enum(['standard', 'high']).default('standard'),
  client_reference_id: z.string().max(500).optional(),
  environment: z.enum(['production', 'test']).default('production'),
  // Any value other than `sync` is treated as async (spec).
  mode: z
    .string()
    .optional()
    .transform((m) => (m === 'sync' ? 'sync' : 'async')),
})

const SYNC_DEGRADED = 'sync_budget_exceeded'

/** Form B: each `files` part becomes its own job, created in upload order. */
export async function submitFormB(ctx: Ctx, deps: AppDeps) {
  const started = Date.now()
  const principal = ctx.state.principal
  const files = filesOf(ctx as never, 'files')
  try {
    const body = fieldsOf(ctx as never)
    const query = ctx.query as Record<string, string | string[]>
    const pick = (k: string) => first(body[k]) ?? first(query[k])
    const fields = parseInput(FormBSubmitFields, {
      pipeline_id: pick('pipeline_id'),
      pipeline_version: pick('pipeline_version'),
      schema_id: pick('schema_id'),
      priority: pick('priority'),
      client_reference_id: pick('client_reference_id'),
      environment: pick('environment'),
      mode: pick('mode'),
    })
    if (files.length === 0) throw new DomainError('MISSING_PART', 'no `files` part in the request')
    const pipeline = await resolvePipeline({
      db: deps.db,
      workspaceId: principal.workspaceId,
      requestedPipelineId: fields.pipeline_id,
      boundPipelineId: principal.boundPipelineId,
      version: fields.pipeline_version ?? null,
      allowDraftVersion: true,
    })
    if (fields.schema_id && !resolveSchema(fields.schema_id, pipeline.definition.schemas)) {
      throw new DomainError('INVALID_PARAMETER', `schema_id ${fields.schema_id} is not defined by the pipeline`)
    }
    const jobIds: string[] = []
    for (const f of files) {
      // A later file's rejection leaves the jobs already created for earlier files standing.
      const inspected = await intakeFile({ db: deps.db, workspaceId: principal.workspaceId, file: toUploaded(f), definition: pipeline.definition })
      const { jobId } = await createJob({
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
        },
      })
      jobIds.push(jobId)
      deps.kickRelay()
    }
    const read = (jobId: string) => getJob({ db: deps.db, workspaceId: principal.workspaceId, jobId })
    const base = baseUrl(ctx, deps)
    if (fields.mode === 'async') {
      ctx.status = 202
      ctx.body = await Promise.all(jobIds.map(async (id) => presentFormBSubmitted(await read(id), base)))
      return
    }
    const allDone = await awaitJobs({ db: deps.db, jobIds, deadline: started + deps.config.syncWindowMs })
    if (!allDone) await degradeSyncJobs({ db: deps.db, jobIds, reason: SYNC_DEGRADED })
    const jobs: JobView[] = await Promise.all(jobIds.map(read))
    ctx.status = allDone ? 200 : 202
    ctx.body = jobs.map((j) =>
      isFinalStatus(j.status) ? presentFormBJob(j, { stages: true, result: true }) : presentFormBSubmitted(j, base),
    )
  } finally {
    await discardUploads(files.map(toUploaded))
  }
}
