import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { discardUploads, intakeFile, type InspectedFile, type UploadedFile } from '@quire/core'
import { DomainError, PLATFORM_MAX_FILE_MB } from '@quire/domain'
import type { BucketSources } from '@quire/storage'
import { z } from 'zod'
import type { AppDeps, Ctx } from '../../http/context.ts'
import { sanitiseFileName } from '../../http/multipart.ts'
import { parseInput } from '../../http/validate.ts'
import { checkMetadata, createFormAJob, resolveFormAPipeline } from './submit-form-a.ts'

/** One object in a bucket the operator connected (QUIRE_BUCKETS). */
export const FormABucketFileRef = z
  .strictObject({
    bucket: z.string().min(1).max(63).describe('Name of a connected bucket, as configured by the operator in QUIRE_BUCKETS.'),
    key: z
      .string()
      .min(1)
      .max(1024)
      .describe('Object key (S3) or path relative to the bucket directory (local bucket). Keys may not leave a local bucket.'),
  })

/**
 * Form A, `Content-Type: application/json`: the multipart parameters, with `files` referencing objects in connected
 * buckets instead of uploaded `file` parts, and `metadata` as a JSON object. All files form one job.
 */
export const FormASubmitJson = z
  .strictObject({
    pipeline_id: z.string({ error: 'pipeline_id is required' }).min(1, 'pipeline_id is required').describe('Id of a published pipeline.'),
    files: z
      .array(FormABucketFileRef, { error: 'files is required: an array of {bucket, key}' })
      .min(1, 'files must reference at least one object')
      .describe('The objects to process, in order; together they form one job (like repeated `file` parts).'),
    version: z.string().optional().describe('Pin a pipeline version ("v<n>"). Default: latest published.'),
    source_tag: z.string().max(200).optional().describe('Stamped on the job.'),
    metadata: z
      .record(z.string(), z.string())
      .nullable()
      .optional()
      .describe('Up to 20 string key/value pairs, echoed on every resulting document.'),
    run_kind: z.enum(['prod', 'test']).default('prod').describe('`test` runs never deliver to destinations.'),
  })

const MAX_BYTES = PLATFORM_MAX_FILE_MB * 1024 * 1024

/** Form A JSON submission: copies each referenced object to a temporary file, then the same intake as an upload. */
export async function submitFormAJson(ctx: Ctx, deps: AppDeps, buckets: BucketSources) {
  const workspaceId = ctx.state.principal.workspaceId
  const raw = ctx.request.body as unknown
  // Metadata problems answer INVALID_METADATA, as in the multipart form.
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) checkMetadata((raw as { metadata?: unknown }).metadata)
  const body = parseInput(FormASubmitJson, raw ?? {})
  if (body.files.length > deps.config.maxFilesPerRequest) {
    throw new DomainError('INVALID_PARAMETER', `files: at most ${deps.config.maxFilesPerRequest} objects per request`)
  }
  body.files.forEach((f, index) => {
    if (!buckets.has(f.bucket, workspaceId)) {
      throw new DomainError('UNKNOWN_BUCKET', `files.${index}.bucket: no bucket named "${f.bucket}" is connected`, { bucket: f.bucket, index })
    }
  })
  const metadata = checkMetadata(body.metadata)
  const pipeline = await resolveFormAPipeline(deps, workspaceId, body.pipeline_id, body.version)

  const uploadDir = path.resolve(deps.config.uploadDir)
  await mkdir(uploadDir, { recursive: true })
  const fetched: UploadedFile[] = []
  try {
    const inspected: InspectedFile[] = []
    for (const ref of body.files) {
      const tempPath = path.join(uploadDir, `bucket-${randomUUID()}`)
      const file: UploadedFile = { tempPath, fileName: sanitiseFileName(ref.key), sizeBytes: 0 }
      fetched.push(file)
      try {
        file.sizeBytes = (await buckets.fetchToFile(ref.bucket, ref.key, tempPath, MAX_BYTES)).sizeBytes
      } catch (err) {
        if (err instanceof DomainError && err.code === 'BUCKET_UNAVAILABLE') {
          deps.log.warn({ err: (err as { cause?: unknown }).cause, bucket: ref.bucket }, err.message)
        }
        throw err
      }
      inspected.push(await intakeFile({ db: deps.db, workspaceId, file, definition: pipeline.definition }))
    }
    await createFormAJob(ctx, deps, pipeline, inspected, { source_tag: body.source_tag, metadata, run_kind: body.run_kind })
  } finally {
    await discardUploads(fetched)
  }
}
