import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createSecretBox, keyIdFor, parseSecretKey, SecretBoxError } from './secret-box.ts'

const OLD = randomBytes(32)
const NEW = randomBytes(32)
const box = (keys: [string, Buffer][], currentKeyId: string) => createSecretBox({ keys: new Map(keys), currentKeyId })

describe('secret box', () => {
  it('round trip: v1:<keyId>:<iv>:<tag>:<ciphertext>, a fresh IV each time, no plaintext inside', () => {
    const b = box([['k1', NEW]], 'k1')
    const plaintext = 'whsec_Müller & Søn — 請求書:with:colons'
    const a = b.seal(plaintext)
    const c = b.seal(plaintext)
    expect(a).toMatch(/^v1:k1:[\w-]{16}:[\w-]{22}:[\w-]+$/)
    expect(a).not.toBe(c)
    expect(a).not.toContain('whsec_')
    expect(b.open(a)).toBe(plaintext)
    expect(b.open(c)).toBe(plaintext)
    expect(b.open(b.seal(''))).toBe('')
  })

  it('a wrong key fails, whatever id it is configured under', () => {
    const sealed = box([['k1', NEW]], 'k1').seal('s3cret')
    expect(() => box([['k1', OLD]], 'k1').open(sealed)).toThrow(/does not authenticate under key "k1"/)
    expect(() => box([['k2', NEW]], 'k2').open(sealed)).toThrow(/key "k1", which is not configured/)
  })

  it('tampering with the ciphertext, tag, IV or key id fails; the error never carries the secret', () => {
    const b = box(
      [
        ['k1', NEW],
        ['k2', NEW],
      ],
      'k1',
    )
    const sealed = b.seal('s3cret-value')
    const parts = sealed.split(':')
    const flip = (text: string) => {
      const bytes = Buffer.from(text, 'base64url')
      bytes[0]! ^= 1
      return bytes.toString('base64url')
    }
    for (const i of [2, 3, 4]) {
      const altered = parts.map((p, j) => (j === i ? flip(p) : p)).join(':')
      expect(() => b.open(altered), `part ${i}`).toThrow(SecretBoxError)
    }
    // Same key under another id: the key id is authenticated (AAD), so relabelling fails too.
    expect(() => b.open(['v1', 'k2', ...parts.slice(2)].join(':'))).toThrow(SecretBoxError)
    expect(() => b.open(`${sealed}:extra`)).toThrow(/malformed/)
    expect(() => b.open('v1:k1:short')).toThrow(/malformed/)
    try {
      b.open(parts.map((p, j) => (j === 4 ? flip(p) : p)).join(':'))
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('s3cret')
    }
  })

  it('rotation: the new box opens values sealed with the old key and seals with the new one', () => {
    const before = box([['old', OLD]], 'old')
    const sealedOld = before.seal('signing-secret')
    const after = box(
      [
        ['new', NEW],
        ['old', OLD],
      ],
      'new',
    )
    expect(after.open(sealedOld)).toBe('signing-secret')
    expect(after.isCurrent(sealedOld)).toBe(false)
    const resealed = after.seal(after.open(sealedOld))
    expect(resealed.startsWith('v1:new:')).toBe(true)
    expect(after.isCurrent(resealed)).toBe(true)
    // Once the old key is retired only re-sealed values open.
    const retired = box([['new', NEW]], 'new')
    expect(retired.open(resealed)).toBe('signing-secret')
    expect(() => retired.open(sealedOld)).toThrow(/not configured/)
  })

  it('legacy plaintext (no v1: prefix) opens as itself and is not current', () => {
    const b = box([['k1', NEW]], 'k1')
    expect(b.open('whsec_legacy')).toBe('whsec_legacy')
    expect(b.isCurrent('whsec_legacy')).toBe(false)
  })

  it('refuses a current key id that is not configured, and keys that are not 32 bytes', () => {
    expect(() => box([['k1', NEW]], 'k2')).toThrow(/current secrets key "k2"/)
    expect(() => box([['k1', randomBytes(16)]], 'k1')).toThrow(/not 32 bytes/)
  })
})

describe('parseSecretKey', () => {
  it('reads base64 with or without an id; without one the id is a fingerprint of the key', () => {
    const b64 = NEW.toString('base64')
    expect(parseSecretKey(b64, 'X')).toEqual({ id: keyIdFor(NEW), key: NEW })
    expect(keyIdFor(NEW)).toMatch(/^k[0-9a-f]{8}$/)
    expect(parseSecretKey(` 2025-01:${b64} `, 'X')).toEqual({ id: '2025-01', key: NEW })
  })

  it('refuses short keys, bad base64 and bad ids, naming the variable but not the key', () => {
    const short = randomBytes(16).toString('base64')
    for (const spec of [short, 'not base64!', `bad id:${NEW.toString('base64')}`, `:${NEW.toString('base64')}`]) {
      let message = ''
      try {
        parseSecretKey(spec, 'QUIRE_SECRETS_KEY')
      } catch (err) {
        message = (err as Error).message
      }
      expect(message, spec).toMatch(/QUIRE_SECRETS_KEY/)
      expect(message).not.toContain(short)
    }
  })
})
