// `npm run secrets:rotate`: re-seals every stored webhook signing secret and receiver credential with the current key
// (QUIRE_SECRETS_KEY), opening older values with QUIRE_SECRETS_OLD_KEYS, and seals any plaintext left from before
// encryption. Idempotent: values already sealed with the current key are left alone. Once it reports 0 values on an
// old key, that key can be removed from QUIRE_SECRETS_OLD_KEYS. Uses DATABASE_URL (default: the local database) and,
// outside production without QUIRE_SECRETS_KEY, the development key in ./.data/secrets.key, as the apps do.
// Exit code 0 when every row was handled, 1 when a value could not be opened (a key is missing from the environment),
// 78 when the configuration is invalid (a malformed key, a bad variable).
import { configOrExit, parseEnv, SecretsEnv, SharedEnv, secretsConfig, sharedConfig } from '@quire/config'
import { resealWebhookSecrets } from '@quire/core'
import { createPrisma } from '@quire/db'
import { createSecretBox } from '@quire/secrets'

const { env, keys } = configOrExit(() => {
  const env = parseEnv(SharedEnv.extend(SecretsEnv.shape), process.env)
  return { env, keys: secretsConfig(env) }
})
const box = createSecretBox(keys)
if (keys.devKeyFile) console.log(`QUIRE_SECRETS_KEY is not set: using the development key in ${keys.devKeyFile.path}`)
const db = createPrisma(sharedConfig(env).databaseUrl)
let code = 1
try {
  const r = await resealWebhookSecrets({ db, secrets: box })
  console.log(
    `secrets: ${r.webhooks} webhooks checked, ${r.resealed} re-sealed with key ${box.currentKeyId} ` +
      `(${r.wasPlaintext} held plaintext), ${r.webhooks - r.resealed} already current`,
  )
  code = 0
} catch (err) {
  console.error(`secrets:rotate failed: ${(err as Error).message}`)
} finally {
  await db.$disconnect()
}
process.exit(code)
