import path from 'node:path'
import {
  BlobStoreEnv,
  FileLimitsEnv,
  BoolEnv,
  ConfigError,
  configOrExit,
  intEnv,
  parseBucketsEnv,
  parseEnv,
  readOrCreateDevSecret,
  SecretsEnv,
  SharedEnv,
  blobStoreConfig,
  fileLimitsConfig,
  secretsConfig,
  sharedConfig,
} from '@quire/config'
import { configureFileLimits } from '@quire/extraction'
import { z } from 'zod'

const Env = SharedEnv.extend({
  ...BlobStoreEnv.shape,
  ...FileLimitsEnv.shape,
  ...SecretsEnv.shape,
  QUIRE_API_PORT: intEnv({ min: 0, default: 3000 }),
  /** Interface to listen on; development stays on loopback unless told otherwise (containers set 0.0.0.0). */
  QUIRE_HOST: z.string().optional(),
  /** Older name of QUIRE_HOST, still read. */
  QUIRE_API_HOST: z.string().optional(),
  /** Where development keeps what it generates (the admin token). */
  QUIRE_DATA_DIR: z.string().default('./.data'),
  QUIRE_PUBLIC_URL: z.string().optional(),
  /** Behind a reverse proxy: take the request's scheme and host from its X-Forwarded-Proto and X-Forwarded-Host. */
  QUIRE_TRUST_PROXY: BoolEnv.default(false),
  QUIRE_ADMIN_TOKEN: z.string().optional(),
  QUIRE_SYNC_WINDOW_MS: intEnv({ min: 0, default: 50_000 }),
  QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_ALLOW_INSECURE_WEBHOOK_URLS: BoolEnv.default(false),
  QUIRE_UPLOAD_DIR: z.string().default('./.data/uploads'),
  /** Temporary upload files last written longer ago than this are a crashed request's, and are removed. */
  QUIRE_UPLOAD_STALE_MS: intEnv({ min: 1000, default: 900_000 }),
  QUIRE_MAX_FILES_PER_REQUEST: intEnv({ min: 1, default: 20 }),
  QUIRE_BUCKETS: z.string().optional(),
  /** Tests: answer a status or error code a route does not declare as a 500 (always logged). */
  QUIRE_ENFORCE_API_CONTRACT: BoolEnv.default(false),
})

const MIN_ADMIN_TOKEN_CHARS = 32

function load() {
  const env = parseEnv(Env, process.env)
  const production = env.NODE_ENV === 'production'
  if (production && (env.QUIRE_ADMIN_TOKEN ?? '').length < MIN_ADMIN_TOKEN_CHARS) {
    throw new ConfigError(
      `QUIRE_ADMIN_TOKEN of at least ${MIN_ADMIN_TOKEN_CHARS} characters is required when NODE_ENV=production`,
    )
  }
  if (production && (env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS || env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS)) {
    throw new ConfigError(
      'QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS and QUIRE_ALLOW_INSECURE_WEBHOOK_URLS are refused in production',
    )
  }
  return {
    ...sharedConfig(env),
    port: env.QUIRE_API_PORT,
    host: env.QUIRE_HOST ?? env.QUIRE_API_HOST ?? '127.0.0.1',
    publicUrl: env.QUIRE_PUBLIC_URL?.replace(/\/+$/, ''),
    trustProxy: env.QUIRE_TRUST_PROXY,
    // Development without a token generates one into QUIRE_DATA_DIR/admin-token (printed by `npm start`); production
    // requires one. Never a fixed, well-known token.
    adminToken: env.QUIRE_ADMIN_TOKEN ?? readOrCreateDevSecret(path.join(env.QUIRE_DATA_DIR, 'admin-token')).value,
    syncWindowMs: env.QUIRE_SYNC_WINDOW_MS,
    urlPolicy: {
      allowPrivate: env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS,
      allowInsecure: env.QUIRE_ALLOW_INSECURE_WEBHOOK_URLS,
    },
    blobStore: blobStoreConfig(env),
    fileLimits: fileLimitsConfig(env),
    secrets: secretsConfig(env),
    uploadDir: env.QUIRE_UPLOAD_DIR,
    uploadStaleMs: env.QUIRE_UPLOAD_STALE_MS,
    maxFilesPerRequest: env.QUIRE_MAX_FILES_PER_REQUEST,
    buckets: parseBucketsEnv(env.QUIRE_BUCKETS),
    enforceApiContract: env.QUIRE_ENFORCE_API_CONTRACT,
  }
}

export type ApiConfig = ReturnType<typeof load>
// A bad configuration stops the process here, before anything connects (exit code 78, one message).
export const config: ApiConfig = configOrExit(load)
// What a file may cost to read holds for every reader in this process (and its parse children) from the start.
configureFileLimits(config.fileLimits)
