import { DomainError, isStorableText } from '@quire/domain'
import { z } from 'zod'

/** Form A multipart text fields of `POST /v1/jobs` (the files arrive as repeated `file` parts). */
export const FormASubmitFields = z.object({
  pipeline_id: z
    .string({ error: 'pipeline_id is required' })
    .min(1, 'pipeline_id is required')
    .describe('Id of a published pipeline; an unpublished one is rejected (400 PIPELINE_NOT_PUBLISHED).'),
  version: z.string().optional().describe('Pin a pipeline version, `v<n>`. Default: latest published.'),
  source_tag: z.string().max(200).optional().describe('Stamped on the job; filter the job list by it.'),
  metadata: z
    .string()
    .optional()
    .describe('A JSON object of up to 20 string values, echoed on every resulting document.'),
  run_kind: z
    .enum(['prod', 'test'])
    .default('prod')
    .describe('`prod` (default) or `test`. Test runs never deliver to destinations; credits are consumed alike.'),
})
export type FormASubmitFields = z.infer<typeof FormASubmitFields>

/** Form B text parameters of `POST /v1/jobs`, as form fields or in the query string (files: repeated `files`). */
export const FormBSubmitFields = z.object({
  pipeline_id: z
    .string()
    .min(1)
    .optional()
    .describe('Pipeline to run; wins over the key’s bound pipeline, then the workspace default, then `parse`.'),
  pipeline_version: z
    .string()
    .regex(/^\d{1,9}$/, 'pipeline_version must be a positive integer')
    .transform(Number)
    .optional()
    .describe('A specific version, draft or published. Default: latest published.'),
  schema_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Extraction schema; when omitted the pipeline’s catch-all routing rule decides.'),
  priority: z.enum(['standard', 'high']).default('standard').describe('`standard` (default) or `high`.'),
  client_reference_id: z
    .string()
    .max(500)
    .optional()
    .describe('Stored and echoed for correlation; not used for duplicate detection.'),
  environment: z.enum(['production', 'test']).default('production').describe('`production` (default) or `test`.'),
  // Any value other than `sync` is treated as async (spec).
  mode: z
    .string()
    .optional()
    .transform((m) => (m === 'sync' ? 'sync' : 'async'))
    .describe('`async` (default) or `sync`; any other value is treated as `async`.'),
})
export type FormBSubmitFields = z.infer<typeof FormBSubmitFields>

/** One object in a bucket the operator connected (QUIRE_BUCKETS). */
export const FormABucketFileRef = z.strictObject({
  bucket: z
    .string()
    .min(1)
    .max(63)
    .describe('Name of a connected bucket, as configured by the operator in QUIRE_BUCKETS.'),
  key: z
    .string()
    .min(1)
    .max(1024)
    .describe(
      'Object key (S3) or path relative to the bucket directory (local bucket). Keys may not leave a local bucket.',
    ),
})

/**
 * Form A, `Content-Type: application/json`: the multipart parameters, with `files` referencing objects in connected
 * buckets instead of uploaded `file` parts, and `metadata` as a JSON object. All files form one job.
 */
export const FormASubmitJson = z.strictObject({
  pipeline_id: z
    .string({ error: 'pipeline_id is required' })
    .min(1, 'pipeline_id is required')
    .describe('Id of a published pipeline.'),
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
export type FormASubmitJson = z.infer<typeof FormASubmitJson>

const Metadata = z.record(z.string(), z.string())
const MAX_METADATA_PAIRS = 20

/** Form A `metadata` as sent in a multipart field: a JSON object of up to 20 string values. */
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
  if (Object.keys(r.data).length > MAX_METADATA_PAIRS) {
    throw new DomainError('INVALID_METADATA', `metadata holds at most ${MAX_METADATA_PAIRS} pairs`)
  }
  // Escapes inside the JSON ("\u0000", a lone "\ud800") decode to text no database column can hold.
  if (Object.entries(r.data).some(([k, v]) => !isStorableText(k) || !isStorableText(v))) {
    throw new DomainError('INVALID_METADATA', 'metadata text may not contain NUL characters or lone surrogates')
  }
  return r.data
}
