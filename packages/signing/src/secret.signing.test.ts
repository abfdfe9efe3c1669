import { describe, expect, it } from 'vitest'
import { generateSecret } from './secret.signing.ts'

describe('generateSecret', () => {
  it('issues whsec_ + 32 random bytes in base64url', () => {
    const secret = generateSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64url')).toHaveLength(32)
  })

  it('never repeats', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => generateSecret()))
    expect(secrets.size).toBe(100)
  })
})
