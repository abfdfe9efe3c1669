import Koa from 'koa'
import pino from 'pino'
import { DomainError } from '@quire/domain'
import { describe, expect, it } from 'vitest'
import { errorHandler } from './error-handler.ts'

async function answer(thrown: unknown) {
  const lines: string[] = []
  const log = pino({ level: 'error' }, { write: (l: string) => void lines.push(l) })
  const app = new Koa()
  app.use(errorHandler(log))
  app.use(() => {
    throw thrown
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  const { port } = server.address() as { port: number }
  try {
    const res = await fetch(`http://127.0.0.1:${port}/x`)
    return { status: res.status, body: (await res.json()) as any, logged: lines.join('') }
  } finally {
    await new Promise((r) => server.close(r))
  }
}

describe('errorHandler', () => {
  it('answers domain errors in their envelope without logging', async () => {
    const r = await answer(new DomainError('TOO_MANY_FILES', 'at most 20 files per request', { max_files: 20 }))
    expect(r.status).toBe(400)
    expect(r.body).toEqual({
      error: 'TOO_MANY_FILES',
      message: 'at most 20 files per request',
      timestamp: expect.any(String),
      details: { max_files: 20 },
    })
    expect(r.logged).toBe('')
  })

  it('maps client-caused library errors to 4xx: formidable (even its 501), JSON syntax, zlib, URIError', async () => {
    expect(
      (await answer(Object.assign(new Error('unknown transfer-encoding'), { code: 1014, httpCode: 501 }))).status,
    ).toBe(400)
    expect((await answer(Object.assign(new Error('maxFields'), { code: 1007, httpCode: 413 }))).body.error).toBe(
      'TOO_MANY_FIELDS',
    )
    expect(
      (await answer(Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400 }))).body.error,
    ).toBe('MALFORMED_REQUEST')
    expect(
      (await answer(Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR', errno: -3 }))).status,
    ).toBe(400)
    const uri = await answer(new URIError('URI malformed'))
    expect(uri.status).toBe(400)
    expect(uri.body.error).toBe('MALFORMED_REQUEST')
  })

  it('answers anything else 500 INTERNAL with an id that is logged', async () => {
    const r = await answer(new Error('boom'))
    expect(r.status).toBe(500)
    expect(r.body.error).toBe('INTERNAL')
    const id = /id ([0-9a-f-]{36})/.exec(r.body.message)![1]!
    expect(r.logged).toContain(id)
    expect(r.logged).toContain('boom')
  })
})
