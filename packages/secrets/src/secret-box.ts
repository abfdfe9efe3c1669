import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Secrets at rest (webhook signing secrets, receiver credentials): AES-256-GCM, one random 96-bit IV per value, the
 * id of the key that sealed it stored beside it so keys can be rotated:
 *
 *   v1:<keyId>:<iv>:<tag>:<ciphertext>      (iv, tag, ciphertext in base64url; "v1:<keyId>" is the GCM AAD)
 *
 * A stored value without the `v1:` prefix is legacy plaintext from before encryption: `open` returns it unchanged and
 * `isCurrent` says it needs sealing (`npm run secrets:rotate` does that). Errors never carry the value.
 */
export const SEALED_PREFIX = 'v1:'

const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/

export type SecretKeys = {
  /** Key id → 32-byte key. Every key a stored value may have been sealed with. */
  keys: ReadonlyMap<string, Buffer>
  /** The key `seal` uses; must be in `keys`. */
  currentKeyId: string
}

export type SecretBox = {
  readonly currentKeyId: string
  /** Encrypts with the current key. */
  seal(plaintext: string): string
  /** Decrypts a sealed value with the key it names; a value without the `v1:` prefix is legacy plaintext. */
  open(stored: string): string
  /** Sealed with the current key (so `secrets:rotate` leaves it alone). */
  isCurrent(stored: string): boolean
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError'
}

/** The id a key gets when the operator does not name it: `k` + 8 hex digits of its SHA-256. */
export function keyIdFor(key: Buffer): string {
  return `k${createHash('sha256').update(key).digest('hex').slice(0, 8)}`
}

/**
 * One key as the environment writes it: `<base64 32 bytes>` or `<id>:<base64 32 bytes>`. Throws naming `what`
 * (never the key).
 */
export function parseSecretKey(spec: string, what: string): { id: string; key: Buffer } {
  const trimmed = spec.trim()
  const colon = trimmed.indexOf(':')
  const id = colon === -1 ? undefined : trimmed.slice(0, colon)
  const encoded = colon === -1 ? trimmed : trimmed.slice(colon + 1)
  if (id !== undefined && !KEY_ID.test(id)) {
    throw new SecretBoxError(`${what}: a key id is 1-32 letters, digits, "_" or "-"`)
  }
  const key = Buffer.from(encoded, 'base64')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length !== KEY_BYTES) {
    throw new SecretBoxError(`${what} must be 32 random bytes in base64 (openssl rand -base64 32), optionally "id:key"`)
  }
  return { id: id ?? keyIdFor(key), key }
}

/** A new random key in the form `parseSecretKey` reads. */
export function generateSecretKey(): string {
  return randomBytes(KEY_BYTES).toString('base64')
}

export function createSecretBox({ keys, currentKeyId }: SecretKeys): SecretBox {
  for (const [id, key] of keys) {
    if (!KEY_ID.test(id)) throw new SecretBoxError(`invalid secrets key id "${id}"`)
    if (key.length !== KEY_BYTES) throw new SecretBoxError(`secrets key "${id}" is not 32 bytes`)
  }
  const current = keys.get(currentKeyId)
  if (!current) throw new SecretBoxError(`the current secrets key "${currentKeyId}" is not among the keys`)
  return {
    currentKeyId,
    seal(plaintext) {
      const header = `${SEALED_PREFIX}${currentKeyId}`
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', current, iv)
      cipher.setAAD(Buffer.from(header, 'utf8'))
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const tag = cipher.getAuthTag()
      return [header, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join(':')
    },
    open(stored) {
      if (!stored.startsWith(SEALED_PREFIX)) return stored
      const parts = stored.split(':')
      if (parts.length !== 5) throw new SecretBoxError('sealed secret is malformed')
      const [, keyId, ivText, tagText, ciphertextText] = parts as [string, string, string, string, string]
      const key = keys.get(keyId)
      if (!key) {
        throw new SecretBoxError(
          `sealed with secrets key "${keyId}", which is not configured (QUIRE_SECRETS_KEY / QUIRE_SECRETS_OLD_KEYS)`,
        )
      }
      const iv = Buffer.from(ivText, 'base64url')
      const tag = Buffer.from(tagText, 'base64url')
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('sealed secret is malformed')
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(`${SEALED_PREFIX}${keyId}`, 'utf8'))
        decipher.setAuthTag(tag)
        return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString(
          'utf8',
        )
      } catch {
        throw new SecretBoxError(`sealed secret does not authenticate under key "${keyId}" (wrong key or altered)`)
      }
    },
    isCurrent(stored) {
      return stored.startsWith(`${SEALED_PREFIX}${currentKeyId}:`)
    },
  }
}

/** A box with one fresh random key, for tests and tools that seal and open within one process. */
export function ephemeralSecretBox(): SecretBox {
  const key = randomBytes(KEY_BYTES)
  return createSecretBox({ keys: new Map([[keyIdFor(key), key]]), currentKeyId: keyIdFor(key) })
}

/**
 * The box a process seals and opens with, from its configured keys. When the key came from the development key file,
 * says so once in the log (which file, and whether this process created it).
 */
export function openProcessSecretBox(
  config: SecretKeys & { devKeyFile?: { path: string; created: boolean } },
  log: { warn(obj: object, msg: string): void },
): SecretBox {
  const box = createSecretBox(config)
  if (config.devKeyFile) {
    const { path, created } = config.devKeyFile
    log.warn(
      { file: path, keyId: box.currentKeyId },
      `QUIRE_SECRETS_KEY is not set: sealing webhook secrets with the development key ${created ? 'generated into' : 'read from'} ${path}`,
    )
  }
  return box
}
