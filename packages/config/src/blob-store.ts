import path from 'node:path'
import type { BlobStoreConfig } from '@quire/storage'
import { z } from 'zod'
import { ConfigError } from './env.ts'
import { bothKeysOrNone, parseJsonEnv, S3_CONNECTION_FIELDS, s3Connection } from './s3-env.ts'

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
  .strictObject({ ...S3_CONNECTION_FIELDS, prefix: z.string().optional() })
  .refine(bothKeysOrNone.check, { message: bothKeysOrNone.message })

/**
 * The blob store chosen by the environment. Throws a ConfigError naming the variable and the bad entry, so a process with
 * a bad configuration stops at start.
 */
export function blobStoreConfig(env: BlobStoreEnv): BlobStoreConfig {
  const kind = (env.QUIRE_BLOB_STORE ?? '').trim().toLowerCase() || 'fs'
  const s3Raw = env.QUIRE_BLOB_S3?.trim() ?? ''
  if (kind === 'fs') {
    if (s3Raw)
      throw new ConfigError(
        'QUIRE_BLOB_S3 is set but QUIRE_BLOB_STORE is not "s3"; set QUIRE_BLOB_STORE=s3 to use it, or unset QUIRE_BLOB_S3',
      )
    return { type: 'fs', dir: path.resolve(env.QUIRE_BLOB_DIR) }
  }
  if (kind !== 's3') throw new ConfigError(`QUIRE_BLOB_STORE must be "fs" or "s3", not "${env.QUIRE_BLOB_STORE}"`)
  if (!s3Raw)
    throw new ConfigError(
      'QUIRE_BLOB_STORE=s3 needs QUIRE_BLOB_S3, a JSON object such as {"bucket": "quire-blobs", "region": "eu-west-1"}',
    )
  const b = parseJsonEnv('QUIRE_BLOB_S3', s3Raw, BlobS3)
  return {
    type: 's3',
    ...s3Connection(b),
    prefix: b.prefix,
    cacheDir: path.resolve(env.QUIRE_BLOB_DIR, 's3-cache'),
  }
}
