import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { keyIdFor } from '@quire/secrets'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from './env.ts'
import { SecretsEnv, secretsConfig } from './secrets.ts'

const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-secrets-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const devKeyFile = path.join(dir, '.data', 'secrets.key')
const parse = (env: Record<string, string>) => secretsConfig(SecretsEnv.parse(env), { devKeyFile })

describe('secretsConfig', () => {
  const a = randomBytes(32)
  const b = randomBytes(32)

  it('QUIRE_SECRETS_KEY is the current key; QUIRE_SECRETS_OLD_KEYS only open', () => {
    const c = parse({
      NODE_ENV: 'production',
      QUIRE_SECRETS_KEY: `2025b:${b.toString('base64')}`,
      QUIRE_SECRETS_OLD_KEYS: ` ${a.toString('base64')} ,`,
    })
    expect(c.currentKeyId).toBe('2025b')
    expect([...c.keys.keys()]).toEqual(['2025b', keyIdFor(a)])
    expect(c.keys.get(keyIdFor(a))).toEqual(a)
    expect(c.devKeyFile).toBeUndefined()
  })

  it('production refuses to start without a key; bad keys and clashing ids are refused by name', () => {
    expect(() => parse({ NODE_ENV: 'production' })).toThrow(/QUIRE_SECRETS_KEY is required when NODE_ENV=production/)
    expect(() => parse({ QUIRE_SECRETS_KEY: 'c2hvcnQ=' })).toThrow(/QUIRE_SECRETS_KEY must be 32 random bytes/)
    expect(() =>
      parse({ QUIRE_SECRETS_KEY: a.toString('base64'), QUIRE_SECRETS_OLD_KEYS: `${a.toString('base64')},x` }),
    ).toThrow(/QUIRE_SECRETS_OLD_KEYS entry 2/)
    expect(() =>
      parse({ QUIRE_SECRETS_KEY: `k:${a.toString('base64')}`, QUIRE_SECRETS_OLD_KEYS: `k:${b.toString('base64')}` }),
    ).toThrow(/share the id "k"/)
    // Configuration errors, so the process stops with exit code 78 instead of being restarted.
    expect(() => parse({ NODE_ENV: 'production' })).toThrow(ConfigError)
    expect(() => parse({ QUIRE_SECRETS_KEY: 'c2hvcnQ=' })).toThrow(ConfigError)
  })

  it('development without a key generates one into the key file, then keeps using it', () => {
    const first = parse({ NODE_ENV: 'development' })
    expect(first.devKeyFile).toEqual({ path: devKeyFile, created: true })
    const key = Buffer.from(readFileSync(devKeyFile, 'utf8').trim(), 'base64')
    expect(first.keys.get(first.currentKeyId)).toEqual(key)
    const again = parse({ NODE_ENV: 'test' })
    expect(again.devKeyFile).toEqual({ path: devKeyFile, created: false })
    expect(again.currentKeyId).toBe(first.currentKeyId)
  })
})
