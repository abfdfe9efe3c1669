import path from 'node:path'
import type { BucketsConfig } from '@quire/storage'
import { z } from 'zod'
import { bothKeysOrNone, parseJsonEnv, S3_CONNECTION_FIELDS, s3Connection } from './s3-env.ts'

const BUCKET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/
const Workspaces = z.array(z.string().min(1)).min(1).optional()
const LocalBucket = z.strictObject({ type: z.literal('local'), dir: z.string().min(1), workspaces: Workspaces })
const S3Bucket = z
  .strictObject({ type: z.literal('s3'), ...S3_CONNECTION_FIELDS, workspaces: Workspaces })
  .refine(bothKeysOrNone.check, { message: bothKeysOrNone.message })
const Buckets = z
  .record(z.string(), z.discriminatedUnion('type', [LocalBucket, S3Bucket]))
  .superRefine((buckets, ctx) => {
    for (const name of Object.keys(buckets)) {
      if (!BUCKET_NAME.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'bucket names are 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit',
        })
      }
    }
  })

/** QUIRE_BUCKETS: a JSON object of bucket name → `{type: "local", dir}` or `{type: "s3", bucket, ...}`. */
export function parseBucketsEnv(raw: string | undefined): BucketsConfig {
  if (raw === undefined || raw.trim() === '') return {}
  const parsed = parseJsonEnv('QUIRE_BUCKETS', raw, Buckets)
  const out: BucketsConfig = {}
  for (const [name, b] of Object.entries(parsed)) {
    out[name] =
      b.type === 'local'
        ? { type: 'local', dir: path.resolve(b.dir), workspaces: b.workspaces }
        : { type: 's3', ...s3Connection(b), workspaces: b.workspaces }
  }
  return out
}
