import { z } from 'zod'

/** Parses "true"/"1"/"yes" and friends; `z.coerce.boolean()` would turn "false" into true. */
const BoolEnv = z.preprocess(
  (v) => (typeof v === 'string' ? ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()) : v),
  z.boolean(),
)

const Env = z.object({
  NODE_ENV: z.string().default('development'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/quire'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  QUIRE_QUEUE_PREFIX: z.string().default('quire'),
  QUIRE_API_PORT: z.coerce.number().int().min(0).default(3000),
  QUIRE_API_HOST: z.string().default('0.0.0.0'),
  QUIRE_PUBLIC_URL: z.string().optional(),
  QUIRE_ADMIN_TOKEN: z.string().optional(),
  QUIRE_SYNC_WINDOW_MS: z.coerce.number().int().min(0).default(50_000),
  QUIRE_JOB_RETENTION_MS: z.coerce.number().int().min(1).default(86_400_000),
  QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_ALLOW_INSECURE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_BLOB_DIR: z.string().default('./.data/blobs'),
  QUIRE_UPLOAD_DIR: z.string().default('./.data/uploads'),
  QUIRE_MAX_FILES_PER_REQUEST: z.coerce.number().int().min(1).default(20),
  QUIRE_LOG_LEVEL: z.string().default('info'),
})

function load() {
  const env = Env.parse(process.env)
  const production = env.NODE_ENV === 'production'
  if (production && !env.QUIRE_ADMIN_TOKEN) throw new Error('QUIRE_ADMIN_TOKEN is required when NODE_ENV=production')
  if (production && (env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS || env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS)) {
    throw new Error('QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS and QUIRE_ALLOW_INSECURE_WEBHOOK_URLS are refused in production')
  }
  return {
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUIRE_QUEUE_PREFIX,
    port: env.QUIRE_API_PORT,
    host: env.QUIRE_API_HOST,
    publicUrl: env.QUIRE_PUBLIC_URL?.replace(/\/+$/, ''),
    // Development falls back to a fixed token so `npm start` works out of the box; production requires one.
    adminToken: env.QUIRE_ADMIN_TOKEN ?? 'dev-admin-token',
    syncWindowMs: env.QUIRE_SYNC_WINDOW_MS,
    retentionMs: env.QUIRE_JOB_RETENTION_MS,
    urlPolicy: { allowPrivate: env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS, allowInsecure: env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS },
    blobDir: env.QUIRE_BLOB_DIR,
    uploadDir: env.QUIRE_UPLOAD_DIR,
    maxFilesPerRequest: env.QUIRE_MAX_FILES_PER_REQUEST,
    logLevel: env.QUIRE_LOG_LEVEL,
  }
}

export type ApiConfig = ReturnType<typeof load>
export const config: ApiConfig = load()
