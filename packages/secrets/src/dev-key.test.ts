import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { loadOrCreateDevKey } from './dev-key.ts'
import { parseSecretKey } from './secret-box.ts'

const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'quire-devkey-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('loadOrCreateDevKey', () => {
  it('creates a 0600 key file once (in a new .data directory), then reads the same key', () => {
    const file = path.join(tempDir(), '.data', 'secrets.key')
    const first = loadOrCreateDevKey(file)
    expect(first.created).toBe(true)
    expect(parseSecretKey(first.key, 'dev key').key).toHaveLength(32)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(loadOrCreateDevKey(file)).toEqual({ key: first.key, created: false })
    expect(readdirSync(path.dirname(file))).toEqual(['secrets.key'])
  })

  it('processes starting at once agree on one key, and exactly one of them created it', async () => {
    const file = path.join(tempDir(), 'secrets.key')
    const module = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dev-key.ts')
    const script = `const { loadOrCreateDevKey } = await import(${JSON.stringify(module)}); console.log(JSON.stringify(loadOrCreateDevKey(${JSON.stringify(file)})))`
    const run = () =>
      new Promise<{ key: string; created: boolean }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
        let out = ''
        child.stdout.on('data', (d) => {
          out += d
        })
        child.on('error', reject)
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))))
      })
    const results = await Promise.all(Array.from({ length: 4 }, run))
    expect(new Set(results.map((r) => r.key)).size).toBe(1)
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(readdirSync(path.dirname(file))).toEqual(['secrets.key'])
  }, 60_000)
})
