import path from 'node:path'
import type { BucketsConfig } from '@quire/storage'
import { BlobStoreEnv, BoolEnv, SharedEnv, blobStoreConfig, sharedConfig } from '@quire/config'
import { z } from 'zod'

const Env = SharedEnv.extend({
  ...BlobStoreEnv.shape,
  QUIRE_API_PORT: z.coerce.number().int().min(0).default(3000),
  QUIRE_API_HOST: z.string().default('0.0.0.0'),
  QUIRE_PUBLIC_URL: z.string().optional(),
  QUIRE_ADMIN_TOKEN: z.string().optional(),
  QUIRE_SYNC_WINDOW_MS: z.coerce.number().int().min(0).default(50_000),
  QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_ALLOW_INSECURE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_UPLOAD_DIR: z.string().default('./.data/uploads'),
  QUIRE_MAX_FILES_PER_REQUEST: z.coerce.number().int().min(1).default(20),
  QUIRE_BUCKETS: z.string().optional(),
})

const BUCKET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/
const Workspaces = z.array(z.string().min(1)).min(1).optional()
const LocalBucket = z.strictObject({ type: z.literal('local'), dir: z.string().min(1), workspaces: Workspaces })
const S3Bucket = z
  .strictObject({
    type: z.literal('s3'),
    bucket: z.string().min(1),
    region: z.string().min(1).default('us-east-1'),
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    force_path_style: z.boolean().default(false),
    access_key_id: z.string().min(1).optional(),
    secret_access_key: z.string().min(1).optional(),
    session_token: z.string().min(1).optional(),
    workspaces: Workspaces,
  })
  .refine((b) => (b.access_key_id === undefined) === (b.secret_access_key === undefined), {
    message: 'give both access_key_id and secret_access_key, or neither (the AWS default credential chain)',
  })
const Buckets = z.record(z.string(), z.discriminatedUnion('type', [LocalBucket, S3Bucket])).superRefine((buckets, ctx) => {
  for (const name of Object.keys(buckets)) {
    if (!BUCKET_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: 'bucket names are 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit' })
    }
  }
})

/** QUIRE_BUCKETS: a JSON object of bucket name → `{type: "local", dir}` or `{type: "s3", bucket, ...}`. */
export function parseBucketsEnv(raw: string | undefined): BucketsConfig {
  if (raw === undefined || raw.trim() === '') return {}
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (err) {
    throw new Error(`QUIRE_BUCKETS is not valid JSON: ${(err as Error).message}`)
  }
  const r = Buckets.safeParse(json)
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    throw new Error(`QUIRE_BUCKETS is invalid: ${issues.join('; ')}`)
  }
  const out: BucketsConfig = {}
  for (const [name, b] of Object.entries(r.data)) {
    out[name] =
      b.type === 'local'
        ? { type: 'local', dir: path.resolve(b.dir), workspaces: b.workspaces }
        : {
            type: 's3',
            bucket: b.bucket,
            region: b.region,
            endpoint: b.endpoint,
            forcePathStyle: b.force_path_style,
            credentials:
              b.access_key_id && b.secret_access_key
                ? { accessKeyId: b.access_key_id, secretAccessKey: b.secret_access_key, sessionToken: b.session_token }
                : undefined,
            workspaces: b.workspaces,
          }
  }
  return out
}

function load() {
  const env = Env.parse(process.env)
  const production = env.NODE_ENV === 'production'
  if (production && !env.QUIRE_ADMIN_TOKEN) throw new Error('QUIRE_ADMIN_TOKEN is required when NODE_ENV=production')
  if (production && (env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS || env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS)) {
    throw new Error('QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS and QUIRE_ALLOW_INSECURE_WEBHOOK_URLS are refused in production')
  }
  return {
    ...sharedConfig(env),
    port: env.QUIRE_API_PORT,
    host: env.QUIRE_API_HOST,
    publicUrl: env.QUIRE_PUBLIC_URL?.replace(/\/+$/, ''),
    // Development falls back to a fixed token so `npm start` works out of the box; production requires one.
    adminToken: env.QUIRE_ADMIN_TOKEN ?? 'dev-admin-token',
    syncWindowMs: env.QUIRE_SYNC_WINDOW_MS,
    urlPolicy: { allowPrivate: env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS, allowInsecure: env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS },
    blobStore: blobStoreConfig(env),
    uploadDir: env.QUIRE_UPLOAD_DIR,
    maxFilesPerRequest: env.QUIRE_MAX_FILES_PER_REQUEST,
    buckets: parseBucketsEnv(env.QUIRE_BUCKETS),
  }
}

export type ApiConfig = ReturnType<typeof load>
export const config: ApiConfig = load()
