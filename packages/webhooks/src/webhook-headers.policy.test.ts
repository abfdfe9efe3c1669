import { describe, expect, it } from 'vitest'
import { assertNoReservedHeaders, buildAuthHeaders } from './webhook-headers.policy.ts'

describe('buildAuthHeaders', () => {
  it('sends nothing for none', () => {
    expect(buildAuthHeaders({ type: 'none' })).toEqual({})
  })

  it('sends the key in the configured header for api_key', () => {
    expect(buildAuthHeaders({ type: 'api_key', headerName: 'X-API-Key', key: 'k_123' })).toEqual({
      'X-API-Key': 'k_123',
    })
  })

  it('sends RFC 7617 Basic credentials for basic', () => {
    const headers = buildAuthHeaders({ type: 'basic', username: 'Aladdin', password: 'open sesame' })
    expect(headers).toEqual({ Authorization: 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==' })
  })

  it('encodes non-ASCII basic credentials as UTF-8', () => {
    const headers = buildAuthHeaders({ type: 'basic', username: 'jürgen', password: 'pä:ss' })
    const decoded = Buffer.from(headers.Authorization!.slice('Basic '.length), 'base64').toString('utf8')
    expect(decoded).toBe('jürgen:pä:ss')
  })
})

describe('assertNoReservedHeaders', () => {
  it('accepts ordinary static headers', () => {
    expect(assertNoReservedHeaders({})).toEqual({ ok: true })
    expect(assertNoReservedHeaders({ 'X-Tenant': 'acme', Authorization: 'Bearer abc', 'X-Trace': '' })).toEqual({
      ok: true,
    })
  })

  it.each(['X-Service-Signature', 'x-service-delivery-id', 'X-SERVICE-Custom', 'X-Service-'])(
    'rejects the reserved prefix in %s',
    (name) => {
      expect(assertNoReservedHeaders({ [name]: 'v' })).toMatchObject({
        ok: false,
        code: 'reserved_header',
        header: name,
      })
    },
  )

  it.each(['Host', 'Content-Length', 'content-type', 'Transfer-Encoding', 'Connection', 'Upgrade', 'TE', 'User-Agent'])(
    'rejects the transport header %s',
    (name) => {
      expect(assertNoReservedHeaders({ [name]: 'v' })).toMatchObject({
        ok: false,
        code: 'reserved_header',
        header: name,
      })
    },
  )

  it('does not reserve names that merely contain X-Service', () => {
    expect(assertNoReservedHeaders({ 'X-My-X-Service-Id': '1', 'X-Services': '2' })).toEqual({ ok: true })
  })

  it('rejects invalid names and header injection in values', () => {
    expect(assertNoReservedHeaders({ 'Bad Name': 'v' })).toMatchObject({ ok: false, code: 'invalid_header' })
    expect(assertNoReservedHeaders({ '': 'v' })).toMatchObject({ ok: false, code: 'invalid_header' })
    expect(assertNoReservedHeaders({ 'X-A': 'ok\r\nX-Service-Signature: forged' })).toMatchObject({
      ok: false,
      code: 'invalid_header',
      header: 'X-A',
    })
    expect(assertNoReservedHeaders({ 'X-A': 'nul\0' })).toMatchObject({ ok: false, code: 'invalid_header' })
  })
})
