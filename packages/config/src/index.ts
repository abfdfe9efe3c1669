import { z } from 'zod'
import { intEnv } from './env.ts'

/**
 * Environment pieces every Quire process shares. Each app's own `config.ts` extends `SharedEnv` with its knobs, reads
 * `process.env` with `parseEnv` (./env.ts) and is the only place that reads it.
 */

export const SharedEnv = z.object({
  NODE_ENV: z.string().default('development'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/quire'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  QUIRE_QUEUE_PREFIX: z.string().min(1).default('quire'),
  QUIRE_LOG_LEVEL: z.string().default('info'),
  /** Attempts per stage job; every process that relays the outbox gives stage jobs this many. */
  QUIRE_STAGE_ATTEMPTS: intEnv({ min: 1, default: 3 }),
  /** Outbox rows already handed to BullMQ are deleted this long after dispatch (by every process's relay). */
  QUIRE_OUTBOX_RETENTION_MS: intEnv({ min: 0, default: 3_600_000 }),
  /**
   * On SIGTERM/SIGINT: how long in-flight work may take to finish (API requests, stage and webhook jobs) before what
   * is left is handed back to the queue for another process.
   */
  QUIRE_SHUTDOWN_GRACE_MS: intEnv({ min: 0, default: 25_000 }),
})
export type SharedEnv = z.infer<typeof SharedEnv>

/** The connection settings every process passes on to @quire/db and @quire/queues. */
export function sharedConfig(env: SharedEnv) {
  return {
    production: env.NODE_ENV === 'production',
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    queuePrefix: clusterSafePrefix(env.QUIRE_QUEUE_PREFIX),
    logLevel: env.QUIRE_LOG_LEVEL,
    stageAttempts: env.QUIRE_STAGE_ATTEMPTS,
    outboxRetentionMs: env.QUIRE_OUTBOX_RETENTION_MS,
    shutdownGraceMs: env.QUIRE_SHUTDOWN_GRACE_MS,
  }
}

/**
 * The BullMQ key prefix as a Redis Cluster hash tag (`quire` → `{quire}`): every key of every queue then hashes to one
 * slot, so BullMQ's multi-key scripts stay valid on a cluster. A prefix that already holds a `{tag}` is kept as it is.
 */
export function clusterSafePrefix(prefix: string): string {
  return /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`
}

export {
  BoolEnv,
  ConfigError,
  configOrExit,
  EX_CONFIG,
  emptyAsUnset,
  intEnv,
  intListEnv,
  parseEnv,
} from './env.ts'
export { BlobStoreEnv, blobStoreConfig } from './blob-store.ts'
export { parseBucketsEnv } from './buckets.ts'
export { parseJsonEnv } from './s3-env.ts'
export { DEV_SECRETS_KEY_FILE, SecretsEnv, secretsConfig } from './secrets.ts'
export type { SecretsConfig } from './secrets.ts'
export { readOrCreateDevSecret } from './dev-secret.ts'
export { DestinationsEnv, destinationsConfig } from './destinations.ts'
export { FileLimitsEnv, fileLimitsConfig } from './file-limits.ts'
