import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sweepStaleUploads } from './upload-sweep.ts'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'quire-upload-sweep-'))
})
afterEach(async () => rm(dir, { recursive: true, force: true }))

describe('sweepStaleUploads (temporary files a crashed API left behind)', () => {
  it('removes files last written before the cutoff and keeps fresh files and directories', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000)
    await writeFile(path.join(dir, 'stale'), 'x')
    await utimes(path.join(dir, 'stale'), hourAgo, hourAgo)
    await writeFile(path.join(dir, 'fresh'), 'x')
    await mkdir(path.join(dir, 'sub'))
    await utimes(path.join(dir, 'sub'), hourAgo, hourAgo)
    expect(await sweepStaleUploads({ dir, olderThanMs: 60_000 })).toBe(1)
    expect((await readdir(dir)).sort()).toEqual(['fresh', 'sub'])
  })

  it('a missing directory is nothing to sweep', async () => {
    expect(await sweepStaleUploads({ dir: path.join(dir, 'absent'), olderThanMs: 1 })).toBe(0)
  })
})
