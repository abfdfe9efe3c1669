import { describe, expect, it } from 'vitest'
import { signFormB, verifyFormB } from './form-b.signing.ts'
import { generateSecret } from './secret.signing.ts'
import { opensslHmacHex } from './openssl-vector.test-helper.ts'

const body = '{"event":"job.completed","delivery_id":"dlv_1","data":{"job_id":"job_1","documents":[]}}'
const ts = 1_700_000_000
const nowAt = (seconds: number) => seconds * 1000

describe('Form B signing', () => {
  it('signs `${timestamp}.${rawBody}` as v1=<hex>, matching openssl', () => {
    const secret = generateSecret()
    expect(signFormB(secret, ts, body)).toBe(`v1=${opensslHmacHex(secret, `${ts}.${body}`)}`)
  })

  it('round-trips sign -> verify with a header-string timestamp', () => {
    const secret = generateSecret()
    const signature = signFormB(secret, ts, body)
    expect(verifyFormB({ secret, rawBody: body, signature, timestamp: String(ts), now: nowAt(ts) })).toEqual({
      ok: true,
    })
    expect(
      verifyFormB({ secret, rawBody: Buffer.from(body), signature, timestamp: ts, now: new Date(nowAt(ts + 5)) }),
    ).toEqual({ ok: true })
  })

  it('accepts any <scheme>= prefix', () => {
    const secret = generateSecret()
    const hex = signFormB(secret, ts, body).slice('v1='.length)
    for (const scheme of ['v1', 'sha256', 'v2']) {
      expect(
        verifyFormB({ secret, rawBody: body, signature: `${scheme}=${hex}`, timestamp: ts, now: nowAt(ts) }).ok,
      ).toBe(true)
    }
  })

  it('rejects a tampered body, secret or timestamp as bad_signature', () => {
    const secret = generateSecret()
    const signature = signFormB(secret, ts, body)
    const base = { secret, rawBody: body, signature, timestamp: ts, now: nowAt(ts) }
    expect(verifyFormB({ ...base, rawBody: body.replace('job_1', 'job_9') })).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
    expect(verifyFormB({ ...base, secret: generateSecret() })).toEqual({ ok: false, reason: 'bad_signature' })
    expect(verifyFormB({ ...base, timestamp: ts + 1 })).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it('rejects timestamps older than the tolerance (default 300 s) and accepts the boundary', () => {
    const secret = generateSecret()
    const signature = signFormB(secret, ts, body)
    const base = { secret, rawBody: body, signature, timestamp: ts }
    expect(verifyFormB({ ...base, now: nowAt(ts + 300) })).toEqual({ ok: true })
    expect(verifyFormB({ ...base, now: nowAt(ts + 301) })).toEqual({ ok: false, reason: 'stale_timestamp' })
    expect(verifyFormB({ ...base, now: nowAt(ts + 3600) })).toEqual({ ok: false, reason: 'stale_timestamp' })
  })

  it('rejects timestamps too far in the future and honours a custom tolerance', () => {
    const secret = generateSecret()
    const signature = signFormB(secret, ts, body)
    const base = { secret, rawBody: body, signature, timestamp: ts }
    expect(verifyFormB({ ...base, now: nowAt(ts - 301) })).toEqual({ ok: false, reason: 'stale_timestamp' })
    expect(verifyFormB({ ...base, now: nowAt(ts + 11), toleranceSeconds: 10 })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    })
    expect(verifyFormB({ ...base, now: nowAt(ts + 10), toleranceSeconds: 10 })).toEqual({ ok: true })
  })

  it('reports malformed signatures and timestamps without throwing', () => {
    const secret = generateSecret()
    const signature = signFormB(secret, ts, body)
    const base = { secret, rawBody: body, signature, timestamp: ts as string | number | undefined, now: nowAt(ts) }
    const malformed = { ok: false, reason: 'malformed' }
    expect(verifyFormB({ ...base, signature: undefined })).toEqual(malformed)
    expect(verifyFormB({ ...base, signature: signature.slice(3) })).toEqual(malformed)
    expect(verifyFormB({ ...base, signature: `${signature.slice(0, -1)}` })).toEqual(malformed)
    expect(verifyFormB({ ...base, signature: 'v1=not-hex' })).toEqual(malformed)
    expect(verifyFormB({ ...base, timestamp: undefined })).toEqual(malformed)
    expect(verifyFormB({ ...base, timestamp: 'yesterday' })).toEqual(malformed)
    expect(verifyFormB({ ...base, timestamp: '-5' })).toEqual(malformed)
    expect(verifyFormB({ ...base, timestamp: 1.5 })).toEqual(malformed)
  })

  it('refuses to sign with a non-integer timestamp', () => {
    expect(() => signFormB('whsec_x', 1.5, body)).toThrow(TypeError)
  })
})
