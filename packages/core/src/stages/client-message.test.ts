import { describe, expect, it } from 'vitest'
import { clientMessage } from './client-message.ts'

// DESIGN "Robustness and operations": internals (SQL, stack, file paths) go to the log, never to the client.
describe('clientMessage', () => {
  it('keeps a plain message as it is', () => {
    expect(clientMessage('PDF is encrypted (password-protected)', 'initialization')).toBe(
      'PDF is encrypted (password-protected)',
    )
  })

  it('removes server file paths', () => {
    const m = clientMessage('PNG image is damaged: Input file is missing: /tmp/quire-blobs/ab/cd/file_1.png', 'parse')
    expect(m).toBe('PNG image is damaged: Input file is missing: <file>')
    expect(
      clientMessage("EISDIR: illegal operation on a directory, open '/var/quire/out/job_1.json'", 'x'),
    ).not.toMatch(/\/var/)
  })

  it('replaces database client and network errors by a plain internal error naming the stage', () => {
    for (const raw of [
      'Invalid `prisma.job.update()` invocation: Transaction already closed',
      'connect ECONNREFUSED 127.0.0.1:5432',
      'TypeError: x is undefined\n    at run (/work/main/packages/core/src/stages/parse.stage.ts:10:5)',
    ]) {
      const m = clientMessage(raw, 'parse')
      expect(m).toMatch(/internal error in the parse stage/)
      expect(m).not.toMatch(/prisma|ECONNREFUSED|\/work|\.ts/i)
    }
  })

  it('keeps dates, fractions and amounts that contain slashes', () => {
    expect(clientMessage('date 12/03/2026 unreadable; 1/2 pages', 'extract')).toBe(
      'date 12/03/2026 unreadable; 1/2 pages',
    )
  })
})
