import { describe, expect, it } from 'vitest'
import { signFormA, verifyFormA } from './form-a.signing.ts'
import { generateSecret } from './secret.signing.ts'
import { opensslHmacHex } from './openssl-vector.test-helper.ts'

const body = '{"id":"dlv_1","type":"job.failed","timestamp":1700000000,"job_id":"job_1","data":{}}'

describe('Form A signing', () => {
  it('matches RFC 4231 test case 2 (key "Jefe")', () => {
    expect(signFormA('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('matches an HMAC computed independently by openssl, keyed with the secret string as-is', () => {
    const secret = generateSecret()
    expect(signFormA(secret, body)).toBe(`sha256=${opensslHmacHex(secret, body)}`)
  })

  it('signs Buffer bodies byte-for-byte, including non-ASCII bytes', () => {
    const raw = Buffer.from('{"name":"Grüße €"}', 'utf8')
    const secret = 'whsec_test'
    expect(signFormA(secret, raw)).toBe(`sha256=${opensslHmacHex(secret, raw)}`)
    expect(signFormA(secret, raw)).toBe(signFormA(secret, raw.toString('utf8')))
  })

  it('round-trips sign -> verify', () => {
    const secret = generateSecret()
    const signature = signFormA(secret, body)
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(verifyFormA({ secret, rawBody: body, signature })).toBe(true)
    expect(verifyFormA({ secret, rawBody: Buffer.from(body), signature })).toBe(true)
  })

  it('rejects a tampered body', () => {
    const secret = generateSecret()
    const signature = signFormA(secret, body)
    expect(verifyFormA({ secret, rawBody: body.replace('job_1', 'job_2'), signature })).toBe(false)
    expect(verifyFormA({ secret, rawBody: `${body} `, signature })).toBe(false)
  })

  it('rejects the wrong secret', () => {
    const signature = signFormA(generateSecret(), body)
    expect(verifyFormA({ secret: generateSecret(), rawBody: body, signature })).toBe(false)
  })

  it('rejects malformed, truncated or missing signatures without throwing', () => {
    const secret = generateSecret()
    const good = signFormA(secret, body)
    for (const signature of [
      undefined,
      null,
      '',
      'sha256=',
      good.slice(0, -2),
      `${good}00`,
      good.replace('sha256=', 'sha1='),
      good.replace('sha256=', ''),
      `sha256=${'z'.repeat(64)}`,
    ]) {
      expect(verifyFormA({ secret, rawBody: body, signature })).toBe(false)
    }
  })
})
