import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const here = path.dirname(fileURLToPath(import.meta.url))

// A child process, because the point is whether the process survives.
const run = (guarded: boolean) =>
  spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `
      import { guardProcess } from ${JSON.stringify(path.join(here, 'process-guards.ts'))}
      const lines = []
      if (${guarded}) guardProcess({ error: (o, m) => lines.push(m) })
      Promise.reject(new Error('stray rejection'))
      setTimeout(() => { throw new Error('stray throw') }, 10)
      setTimeout(() => { console.log(JSON.stringify(lines)); process.exit(0) }, 100)
      `,
    ],
    { encoding: 'utf8', cwd: path.resolve(here, '../../..') },
  )

describe('guardProcess', () => {
  it('keeps the process running through a stray rejection and a stray throw, logging both', () => {
    const res = run(true)
    expect(res.status).toBe(0)
    expect(JSON.parse(res.stdout.trim())).toEqual([
      'unhandled promise rejection (kept running)',
      'uncaught exception (kept running)',
    ])
  })

  it('without it the same process dies (the test can fail)', () => {
    expect(run(false).status).not.toBe(0)
  })
})
