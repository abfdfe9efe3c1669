import path from 'node:path'
import { loadOrCreateDevKey, parseSecretKey, SecretBoxError, type SecretKeys } from '@quire/secrets'
import { z } from 'zod'
import { ConfigError } from './env.ts'

/**
 * The keys that seal webhook secrets and receiver credentials at rest (api, webhook-dispatcher,
 * `npm run secrets:rotate`). Extend an app's environment schema with `SecretsEnv.shape` and pass
 * `secretsConfig(env)` to `createSecretBox` (@quire/secrets).
 */
export const SecretsEnv = z.object({
  NODE_ENV: z.string().default('development'),
  /** The current key: base64 of 32 bytes, optionally `<id>:<base64>`; required in production. */
  QUIRE_SECRETS_KEY: z.string().optional(),
  /** Keys being retired, comma-separated in the same form: values sealed with them still open. */
  QUIRE_SECRETS_OLD_KEYS: z.string().optional(),
})
export type SecretsEnv = z.infer<typeof SecretsEnv>

export type SecretsConfig = SecretKeys & {
  /** Set when no key was configured and the development key file is used (the app logs it once). */
  devKeyFile?: { path: string; created: boolean }
}

/** Where development keeps its generated key (relative to the working directory, like ./.data/blobs). */
export const DEV_SECRETS_KEY_FILE = './.data/secrets.key'

/**
 * Throws a ConfigError naming the variable (never a key) when a key is malformed, two keys share an id, or production has none.
 */
export function secretsConfig(env: SecretsEnv, opts: { devKeyFile?: string } = {}): SecretsConfig {
  const current = env.QUIRE_SECRETS_KEY?.trim()
  let devKeyFile: SecretsConfig['devKeyFile']
  let currentSpec: string
  if (current) currentSpec = current
  else if (env.NODE_ENV === 'production') {
    throw new ConfigError('QUIRE_SECRETS_KEY is required when NODE_ENV=production (openssl rand -base64 32)')
  } else {
    const file = path.resolve(opts.devKeyFile ?? DEV_SECRETS_KEY_FILE)
    const dev = loadOrCreateDevKey(file)
    currentSpec = dev.key
    devKeyFile = { path: file, created: dev.created }
  }
  const first = readKey(currentSpec, devKeyFile ? devKeyFile.path : 'QUIRE_SECRETS_KEY')
  const keys = new Map([[first.id, first.key]])
  const old = (env.QUIRE_SECRETS_OLD_KEYS ?? '').split(',').filter((s) => s.trim())
  old.forEach((spec, i) => {
    const k = readKey(spec, `QUIRE_SECRETS_OLD_KEYS entry ${i + 1}`)
    const existing = keys.get(k.id)
    if (existing && !existing.equals(k.key)) throw new ConfigError(`two secrets keys share the id "${k.id}"`)
    keys.set(k.id, k.key)
  })
  return { keys, currentKeyId: first.id, ...(devKeyFile ? { devKeyFile } : {}) }
}

/** A malformed key is a configuration the process cannot start with. */
function readKey(spec: string, what: string) {
  try {
    return parseSecretKey(spec, what)
  } catch (err) {
    throw err instanceof SecretBoxError ? new ConfigError(err.message) : err
  }
}
