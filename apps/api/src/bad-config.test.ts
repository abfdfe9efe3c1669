// The real API entry, as `npm start` runs it, given a bad configuration: it says what is wrong once and exits with
// EX_CONFIG (78), which `npm start` does not restart. The configuration is read before anything connects, so this
// needs neither PostgreSQL nor Redis (both point at a closed port here).
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

function runApi(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'apps/api/src/main.ts')],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    child.stdout.on('data', (d) => {
      output += String(d)
    })
    child.stderr.on('data', (d) => {
      output += String(d)
    })
    // A process that started anyway would listen forever: stop it so the test fails instead of hanging.
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe('api entry with a bad configuration', () => {
  it('exits 78 with one message naming every bad variable, without a stack trace', async () => {
    const { code, output } = await runApi({
      NODE_ENV: 'development',
      QUIRE_API_PORT: '0x10',
      QUIRE_SYNC_WINDOW_MS: 'maybe',
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/quire_unreachable',
      REDIS_URL: 'redis://127.0.0.1:1',
    })
    expect(code, output).toBe(78)
    expect(output).toContain('QUIRE_API_PORT="0x10"')
    expect(output).toContain('QUIRE_SYNC_WINDOW_MS="maybe"')
    expect(output.match(/Invalid configuration/g)).toHaveLength(1)
    expect(output).not.toMatch(/^ {4}at /m)
    expect(output).not.toMatch(/ECONNREFUSED|ZodError/)
  }, 60_000)
})
