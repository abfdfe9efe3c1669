import { describe, expect, it } from 'vitest'
import { QuireApiError } from './errors.ts'

const answer = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers })

describe('QuireApiError.from', () => {
  it('reads the flat envelope {error, message}', () => {
    const e = QuireApiError.from(answer(409), { error: 'WEBHOOK_NAME_CONFLICT', message: 'taken', timestamp: 'x' })
    expect(e).toMatchObject({ status: 409, code: 'WEBHOOK_NAME_CONFLICT', message: '409 WEBHOOK_NAME_CONFLICT: taken' })
  })

  it('reads the nested envelope {error: {code, message}} and the request id header when sent', () => {
    const e = QuireApiError.from(answer(404, { 'X-Request-Id': 'req_1' }), {
      error: { code: 'job_not_found', message: 'no such job' },
    })
    expect(e).toMatchObject({ status: 404, code: 'job_not_found', requestId: 'req_1' })
  })

  it('falls back to the HTTP status for a body in neither envelope', () => {
    expect(QuireApiError.from(answer(502), '<html>bad gateway</html>')).toMatchObject({
      status: 502,
      code: 'http_502',
      requestId: null,
    })
  })
})
