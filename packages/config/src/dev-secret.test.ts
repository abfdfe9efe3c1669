import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readOrCreateDevSecret } from './dev-secret.ts'

describe('readOrCreateDevSecret', () => {
  it('generates a 0600 file once and returns the same value afterwards', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'quire-secret-')), 'sub', 'admin-token')
    const first = readOrCreateDevSecret(file)
    expect(first.created).toBe(true)
    expect(first.value).toMatch(/^[0-9a-f]{64}$/)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readOrCreateDevSecret(file)).toEqual({ value: first.value, created: false })
    expect(readFileSync(file, 'utf8').trim()).toBe(first.value)
  })
})
