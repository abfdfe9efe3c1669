import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { SECRET_LOG_REDACT_PATHS } from './log-redact.ts'

describe('SECRET_LOG_REDACT_PATHS', () => {
  it('hides secrets and credentials in the shapes Quire logs, keeping the rest', () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const log = pino({ redact: { paths: SECRET_LOG_REDACT_PATHS, censor: '[redacted]' } }, sink)
    log.warn({ secret: 'S1', hmac_secret: 'S2', password: 'S3' }, 'top level')
    log.warn({ webhook: { secret: 'S4', auth: { type: 'api_key', headerName: 'X-Key', key: 'S5' } } }, 'a row')
    log.warn({ body: { auth: { api_key: 'S6', header_name: 'X-Key' }, basic: { password: 'S7', username: 'u' } } }, 'x')
    log.warn({ body: { apikey: { key: 'S8', name: 'X-Key' } }, headers: { Authorization: 'Basic S9' } }, 'form B')
    const text = lines.join('')
    for (const s of ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9']) expect(text).not.toContain(s)
    expect(text).toContain('[redacted]')
    expect(text).toContain('X-Key')
    expect(text).toContain('"username":"u"')
  })
})
