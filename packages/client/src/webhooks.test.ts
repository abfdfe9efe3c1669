import { formProfile } from '@quire/forms'
import { describe, expect, it } from 'vitest'
import { WebhookVerificationError } from './errors.ts'
import { verifyFormA, verifyFormB } from './webhooks.ts'

// Headers are made by the dispatcher's own code (formProfile(form).signatureHeaders, which deliver-attempt.ts sends),
// so these tests fail if the dispatcher's signing and this package's verification drift apart.
const secret = 'whsec_0123456789abcdef'
const body = Buffer.from(
  '{"id":"dlv_1","type":"extract.exited","timestamp":1700000000,"job_id":"job_1","note":"Grüße €"}',
)
const bodyB = Buffer.from('{"event":"job.completed","delivery_id":"dlv_2","data":{"job_id":"job_1","documents":[]}}')
const t0 = 1_700_000_000
const signA = (raw: Buffer, key = secret) => formProfile('A').signatureHeaders(key, raw.toString('utf8'), t0)
const signB = (raw: Buffer = bodyB, at = t0, key = secret) =>
  formProfile('B').signatureHeaders(key, raw.toString('utf8'), at)

const reasonOf = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as WebhookVerificationError).reason
  }
  throw new Error('verification passed')
}

describe('verifyFormA', () => {
  it('accepts what the dispatcher signs and returns the parsed event', () => {
    expect(verifyFormA(body, signA(body), secret)).toMatchObject({ id: 'dlv_1', note: 'Grüße €' })
    expect(verifyFormA(body.toString('utf8'), signA(body), secret).job_id).toBe('job_1')
  })

  it('reads headers in any case, from Node objects and fetch Headers', () => {
    const [[name, value]] = Object.entries(signA(body)) as [[string, string]]
    expect(verifyFormA(body, { [name.toLowerCase()]: [value] }, secret).id).toBe('dlv_1')
    expect(verifyFormA(body, new Headers({ [name]: value }), secret).id).toBe('dlv_1')
  })

  it('refuses a tampered body, a wrong secret and missing or malformed signatures', () => {
    const headers = signA(body)
    expect(reasonOf(() => verifyFormA(Buffer.from(`${body} `), headers, secret))).toBe('bad_signature')
    expect(reasonOf(() => verifyFormA(body, headers, 'whsec_other'))).toBe('bad_signature')
    expect(reasonOf(() => verifyFormA(body, {}, secret))).toBe('malformed')
    const [[name, value]] = Object.entries(headers) as [[string, string]]
    for (const bad of [value.slice(0, -2), value.replace('sha256=', 'v1='), value.replace('sha256=', ''), 'sha256=']) {
      expect(reasonOf(() => verifyFormA(body, { [name]: bad }, secret))).toBe('malformed')
    }
  })

  it('refuses a parsed object instead of raw bytes', () => {
    expect(() => verifyFormA(JSON.parse(body.toString()) as never, signA(body), secret)).toThrow(TypeError)
  })
})

describe('verifyFormB', () => {
  const at = (seconds: number) => ({ now: seconds * 1000 })

  it('accepts what the dispatcher signs within the tolerance, both sides of the clock', () => {
    const headers = signB(bodyB)
    expect(verifyFormB(bodyB, headers, secret, at(t0)).delivery_id).toBe('dlv_2')
    expect(
      verifyFormB(bodyB, headers, secret, { toleranceSeconds: 300, now: new Date((t0 + 300) * 1000) }),
    ).toBeTruthy()
    expect(verifyFormB(bodyB, headers, secret, at(t0 - 300))).toBeTruthy()
  })

  it('refuses old and future timestamps, and honours a custom tolerance', () => {
    const headers = signB(bodyB)
    expect(reasonOf(() => verifyFormB(bodyB, headers, secret, at(t0 + 301)))).toBe('stale_timestamp')
    expect(reasonOf(() => verifyFormB(bodyB, headers, secret, at(t0 - 301)))).toBe('stale_timestamp')
    expect(reasonOf(() => verifyFormB(bodyB, headers, secret, { toleranceSeconds: 10, now: (t0 + 11) * 1000 }))).toBe(
      'stale_timestamp',
    )
  })

  it('refuses a tampered body, a wrong secret and a timestamp header swapped from another delivery', () => {
    const headers = signB(bodyB)
    expect(reasonOf(() => verifyFormB(Buffer.from(`${bodyB} `), headers, secret, at(t0)))).toBe('bad_signature')
    expect(reasonOf(() => verifyFormB(bodyB, headers, 'whsec_other', at(t0)))).toBe('bad_signature')
    const later = signB(bodyB, t0 + 5)
    const swapped = { ...headers, 'X-Service-Timestamp': later['X-Service-Timestamp'] }
    expect(reasonOf(() => verifyFormB(bodyB, swapped, secret, at(t0)))).toBe('bad_signature')
  })

  it('refuses missing or malformed headers', () => {
    const headers = signB(bodyB)
    expect(reasonOf(() => verifyFormB(bodyB, { ...headers, 'X-Service-Timestamp': 'soon' }, secret, at(t0)))).toBe(
      'malformed',
    )
    expect(reasonOf(() => verifyFormB(bodyB, { 'X-Service-Timestamp': String(t0) }, secret, at(t0)))).toBe('malformed')
  })
})
