import path from 'node:path'
import type { BlobStoreConfig } from '@quire/storage'
import { z } from 'zod'

/**
 * Where uploaded files are stored, for every process that reads or writes them (api, stage-worker). Extend an app's
 * environment schema with `BlobStoreEnv.shape` and pass `blobStoreConfig(env)` to `createBlobStore` (@quire/storage).
 */
export const BlobStoreEnv = z.object({
  /** `fs` (default) or `s3`. */
  QUIRE_BLOB_STORE: z.string().optional(),
  /** fs: the store itself. s3: where local copies of objects are cached for parsing (under `s3-cache/`). */
  QUIRE_BLOB_DIR: z.string().default('./.data/blobs'),
  /** s3: a JSON object, see `parseBlobS3`. */
  QUIRE_BLOB_S3: z.string().optional(),
})
export type BlobStoreEnv = z.infer<typeof BlobStoreEnv>

const BlobS3 = z
  .strictObject({
    bucket: z.string().min(1),
    region: z.string().min(1).default('us-east-1'),
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    force_path_style: z.boolean().default(false),
    access_key_id: z.string().min(1).optional(),
    secret_access_key: z.string().min(1).optional(),
    session_token: z.string().min(1).optional(),
    prefix: z.string().optional(),
  })
  .refine((b) => (b.access_key_id === undefined) === (b.secret_access_key === undefined), {
    message: 'give both access_key_id and secret_access_key, or neither (the AWS default credential chain)',
  })

/**
 * The blob store chosen by the environment. Throws an Error naming the variable and the bad entry, so a process with
 * a bad configuration stops at start.
 */
export function blobStoreConfig(env: BlobStoreEnv): BlobStoreConfig {
  const kind = (env.QUIRE_BLOB_STORE ?? '').trim().toLowerCase() || 'fs'
  const s3Raw = env.QUIRE_BLOB_S3?.trim() ?? ''
  if (kind === 'fs') {
    if (s3Raw) throw new Error('QUIRE_BLOB_S3 is set but QUIRE_BLOB_STORE is not "s3"; set QUIRE_BLOB_STORE=s3 to use it, or unset QUIRE_BLOB_S3')
    return { type: 'fs', dir: path.resolve(env.QUIRE_BLOB_DIR) }
  }
  if (kind !== 's3') throw new Error(`QUIRE_BLOB_STORE must be "fs" or "s3", not "${env.QUIRE_BLOB_STORE}"`)
  if (!s3Raw) throw new Error('QUIRE_BLOB_STORE=s3 needs QUIRE_BLOB_S3, a JSON object such as {"bucket": "quire-blobs", "region": "eu-west-1"}')
  let json: unknown
  try {
    json = JSON.parse(s3Raw)
  } catch (err) {
    throw new Error(`QUIRE_BLOB_S3 is not valid JSON: ${(err as Error).message}`)
  }
  const r = BlobS3.safeParse(json)
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    throw new Error(`QUIRE_BLOB_S3 is invalid: ${issues.join('; ')}`)
  }
  const b = r.data
  return {
    type: 's3',
    bucket: b.bucket,
    region: b.region,
    endpoint: b.endpoint,
    forcePathStyle: b.force_path_style,
    credentials:
      b.access_key_id && b.secret_access_key
        ? { accessKeyId: b.access_key_id, secretAccessKey: b.secret_access_key, sessionToken: b.session_token }
        : undefined,
    prefix: b.prefix,
    cacheDir: path.resolve(env.QUIRE_BLOB_DIR, 's3-cache'),
  }
}
