import { createJob, discardUploads, getJob, intakeFile, resolvePipeline, type InspectedFile } from '@quire/core'
import { DomainError } from '@quire/domain'
import { parseFormAVersion, presentFormAJobCreated } from '@quire/forms'
import { z } from 'zod'
import type { AppDeps, Ctx } from '../../http/context.ts'
import { fieldsOf, filesOf, toUploaded } from '../../http/multipart.ts'
import { first, parseInput } from '../../http/validate.ts'

export const FormASubmitFields = z.object({
  pipeline_id: z.string({ error: 'pipeline_id is required' }).min(1, 'pipeline_id is required'),
  version: z.string().optional(),
  source_tag: z.string().max(200).optional(),
  metadata: z.string().optional(),
  run_kind: z.enum(['prod', 'test']).default('prod'),
})

const Metadata = z.record(z.string(), z.string())

/** Form A `metadata`: one field holding a JSON object of up to 20 string values. */
export function parseMetadata(raw: string | undefined): Record<string, string> | null {
  if (raw === undefined || raw === '') return null
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new DomainError('INVALID_METADATA', 'metadata must be a JSON object')
  }
  return checkMetadata(parsed)
}

/** An already-parsed metadata value (the JSON request): an object of up to 20 string values. */
export function checkMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null
  const r = Metadata.safeParse(value)
  if (!r.success || Array.isArray(value)) {
    throw new DomainError('INVALID_METADATA', 'metadata must be a JSON object of string values')
  }
  if (Object.keys(r.data).length > 20) throw new DomainError('INVALID_METADATA', 'metadata holds at most 20 pairs')
  return r.data
}

/** Form A: all `file` parts form one job (a batch) answered by one 202 object. */
export async function submitFormA(ctx: Ctx, deps: AppDeps) {
  const principal = ctx.state.principal
  const files = filesOf(ctx as never, 'file')
  try {
    const raw = fieldsOf(ctx as never)
    const fields = parseInput(FormASubmitFields, {
      pipeline_id: first(raw.pipeline_id),
      version: first(raw.version),
      source_tag: first(raw.source_tag),
      metadata: first(raw.metadata),
      run_kind: first(raw.run_kind),
    })
    const metadata = parseMetadata(fields.metadata)
    if (files.length === 0) throw new DomainError('MISSING_PART', 'no `file` part in the request')
    const pipeline = await resolveFormAPipeline(deps, principal.workspaceId, fields.pipeline_id, fields.version)
    const inspected = []
    for (const f of files) {
      inspected.push(await intakeFile({ db: deps.db, workspaceId: principal.workspaceId, file: toUploaded(f), definition: pipeline.definition }))
    }
    await createFormAJob(ctx, deps, pipeline, inspected, { ...fields, metadata })
  } finally {
    await discardUploads(files.map(toUploaded))
  }
}

/** Form A `pipeline_id` and optional `version` ("v<n>") to a published pipeline version. */
export async function resolveFormAPipeline(deps: AppDeps, workspaceId: string, pipelineId: string, rawVersion: string | undefined) {
  let version: number | null = null
  if (rawVersion !== undefined) {
    version = parseFormAVersion(rawVersion)
    if (version === null) throw new DomainError('INVALID_PARAMETER', 'version must look like v<number>')
  }
  return resolvePipeline({ db: deps.db, workspaceId, requestedPipelineId: pipelineId, version, allowDraftVersion: false })
}

/** One job for every inspected file of a Form A request (multipart or bucket reference), answered 202. */
export async function createFormAJob(
  ctx: Ctx,
  deps: AppDeps,
  pipeline: Awaited<ReturnType<typeof resolvePipeline>>,
  files: InspectedFile[],
  fields: { source_tag?: string; metadata: Record<string, string> | null; run_kind: 'prod' | 'test' },
) {
  const workspaceId = ctx.state.principal.workspaceId
  const { jobId } = await createJob({
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
    },
  })
  deps.kickRelay()
  ctx.status = 202
  ctx.body = presentFormAJobCreated(await getJob({ db: deps.db, workspaceId, jobId }))
}
