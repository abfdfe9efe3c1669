import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { discardUploads, intakeFile, type InspectedFile, type UploadedFile } from '@quire/core'
import { DomainError, PLATFORM_MAX_FILE_MB } from '@quire/domain'
import { checkMetadata, FormASubmitJson } from '@quire/forms'
import { createBucketSources } from '@quire/storage'
import { sanitiseFileName } from '../../http/multipart.ts'
import { parseInput } from '../../http/validate.ts'
import type { RouteInput } from '../route.ts'
import { createFormAJob, resolveFormAPipeline } from './submit-form-a.ts'

const MAX_BYTES = PLATFORM_MAX_FILE_MB * 1024 * 1024

/** Form A JSON submission: copies each referenced object to a temporary file, then the same intake as an upload. */
export async function submitFormAJson({ deps, principal, confirmKey, profile, body: raw }: RouteInput) {
  const workspaceId = principal.workspaceId
  const buckets = bucketSourcesOf(deps)
  // Metadata problems answer INVALID_METADATA, as in the multipart form.
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) checkMetadata((raw as { metadata?: unknown }).metadata)
  const body = parseInput(FormASubmitJson, raw ?? {})
  if (body.files.length > deps.config.maxFilesPerRequest) {
    throw new DomainError('INVALID_PARAMETER', `files: at most ${deps.config.maxFilesPerRequest} objects per request`)
  }
  body.files.forEach((f, index) => {
    if (!buckets.has(f.bucket, workspaceId)) {
      throw new DomainError('UNKNOWN_BUCKET', `files.${index}.bucket: no bucket named "${f.bucket}" is connected`, {
        bucket: f.bucket,
        index,
      })
    }
  })
  const metadata = checkMetadata(body.metadata)
  const pipeline = await resolveFormAPipeline(deps, workspaceId, body.pipeline_id, body.version, profile)

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
      inspected.push(
        await intakeFile({
          db: deps.db,
          workspaceId,
          file,
          definition: pipeline.definition,
          formTypes: profile.uploadTypes,
          confirmKey,
        }),
      )
    }
    return await createFormAJob(deps, workspaceId, pipeline, inspected, {
      source_tag: body.source_tag,
      metadata,
      run_kind: body.run_kind,
      waitForReview: profile.jobWaitsForReview,
      confirmKey,
    })
  } finally {
    await discardUploads(fetched)
  }
}

const bucketSources = new WeakMap<object, ReturnType<typeof createBucketSources>>()
/** The operator's connected buckets, built once per app. */
function bucketSourcesOf(deps: RouteInput['deps']) {
  let b = bucketSources.get(deps.config)
  if (!b) bucketSources.set(deps.config, (b = createBucketSources(deps.config.buckets)))
  return b
}
