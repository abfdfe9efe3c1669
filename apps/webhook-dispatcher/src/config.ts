import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import { FORM_B_RETRY_SCHEDULE_MS, parseRetryScheduleMs } from '@quire/webhooks'
import {
  BoolEnv,
  ConfigError,
  configOrExit,
  intEnv,
  parseEnv,
  SecretsEnv,
  SharedEnv,
  secretsConfig,
  sharedConfig,
} from '@quire/config'
import { z } from 'zod'

const Env = SharedEnv.extend({
  ...SecretsEnv.shape,
  QUIRE_PUBLIC_URL: z.string().optional(),
  /** The API's port, for the default public URL: `npm start` runs both apps with one environment. */
  QUIRE_API_PORT: intEnv({ min: 1, max: 65535, default: 3000 }),
  QUIRE_WEBHOOK_TIMEOUT_MS: intEnv({ min: 1, default: 30_000 }),
  QUIRE_WEBHOOK_CONNECT_TIMEOUT_MS: intEnv({ min: 1, default: 10_000 }),
  QUIRE_WEBHOOK_A_RETRY_BASE_MS: intEnv({ min: 0, default: 4_000 }),
  QUIRE_WEBHOOK_A_MAX_ATTEMPTS: intEnv({ min: 1, default: 10 }),
  QUIRE_WEBHOOK_A_GIVE_UP_MS: intEnv({ min: 0, default: 2_100_000 }),
  QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS: z
    .string()
    .transform((text, ctx) => {
      const schedule = parseRetryScheduleMs(text)
      if (!schedule) {
        ctx.addIssue({ code: 'custom', message: 'expected comma-separated milliseconds (decimal integers)' })
        return z.NEVER
      }
      return schedule
    })
    .default(() => [...FORM_B_RETRY_SCHEDULE_MS]),
  QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: BoolEnv.default(false),
  /** PEM file of an extra CA to trust for receivers (self-hosted receivers with a private CA). */
  QUIRE_WEBHOOK_EXTRA_CA_FILE: z.string().optional(),
  QUIRE_DELIVERY_CONCURRENCY: intEnv({ min: 1, default: 20 }),
})

/** The dispatcher's configuration from an environment (process.env when run); throws a ConfigError when it is bad. */
export function loadDispatcherConfig(source: NodeJS.ProcessEnv = process.env) {
  const env = parseEnv(Env, source)
  if (env.NODE_ENV === 'production' && env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS) {
    throw new ConfigError('QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS is refused in production')
  }
  return {
    ...sharedConfig(env),
    publicUrl: (env.QUIRE_PUBLIC_URL ?? `http://127.0.0.1:${env.QUIRE_API_PORT}`).replace(/\/+$/, ''),
    timeoutMs: env.QUIRE_WEBHOOK_TIMEOUT_MS,
    connectTimeoutMs: env.QUIRE_WEBHOOK_CONNECT_TIMEOUT_MS,
    retry: {
      doubling: {
        baseMs: env.QUIRE_WEBHOOK_A_RETRY_BASE_MS,
        maxAttempts: env.QUIRE_WEBHOOK_A_MAX_ATTEMPTS,
        giveUpMs: env.QUIRE_WEBHOOK_A_GIVE_UP_MS,
      },
      schedule: env.QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS,
    },
    allowPrivate: env.QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS,
    // The extra CA is added to, not instead of, the public roots.
    ca: env.QUIRE_WEBHOOK_EXTRA_CA_FILE
      ? [...rootCertificates, readExtraCa(env.QUIRE_WEBHOOK_EXTRA_CA_FILE)]
      : undefined,
    concurrency: env.QUIRE_DELIVERY_CONCURRENCY,
    secrets: secretsConfig(env),
  }
}

/** A CA file that cannot be read is a configuration to fix, not a crash to restart. */
function readExtraCa(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError(
      `QUIRE_WEBHOOK_EXTRA_CA_FILE=${JSON.stringify(file)} cannot be read: ${(err as Error).message}`,
    )
  }
}

export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>
// A bad configuration stops the process here, before anything connects (exit code 78, one message).
export const config: DispatcherConfig = configOrExit(() => loadDispatcherConfig())
