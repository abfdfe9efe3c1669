import { BlobStoreEnv, BoolEnv, parseBucketsEnv, SharedEnv, blobStoreConfig, sharedConfig } from '@quire/config'
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
