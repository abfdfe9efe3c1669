// The filesystem blob store's listing and moves, on a real directory.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createFsBlobStore } from './blob-store.ts'

const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-fs-blobs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const listAll = async (store: ReturnType<typeof createFsBlobStore>) => {
  const out = []
  for await (const b of store.list()) out.push(b)
  return out.sort((x, y) => x.key.localeCompare(y.key))
}

describe('filesystem blob store: list', () => {
  it('lists every file under the root as a slash-separated key with its modification time', async () => {
    const root = path.join(dir, 'store')
    const store = createFsBlobStore({ dir: root })
    let n = 0
    const put = async (key: string) => {
      const tmp = path.join(dir, `upload-${n++}`)
      writeFileSync(tmp, key)
      await store.putFile(key, tmp)
    }
    await put('ws_1/aa/job_1-0')
    await put('ws_1/aa/job_1-1')
    await put('ws_2/bb/job_2-0')
    const old = new Date('2026-01-02T03:04:05Z')
    utimesSync(path.join(root, 'ws_2', 'bb', 'job_2-0'), old, old)
    // An empty directory lists nothing; a symbolic link is not a stored file.
    mkdirSync(path.join(root, 'ws_3', 'cc'), { recursive: true })
    symlinkSync(path.join(root, 'ws_1', 'aa', 'job_1-0'), path.join(root, 'ws_3', 'cc', 'link'))
    const listed = await listAll(store)
    expect(listed.map((b) => b.key)).toEqual(['ws_1/aa/job_1-0', 'ws_1/aa/job_1-1', 'ws_2/bb/job_2-0'])
    expect(listed[2]!.modifiedAt.getTime()).toBe(old.getTime())
    expect(Math.abs(listed[0]!.modifiedAt.getTime() - Date.now())).toBeLessThan(60_000)
    await store.delete('ws_1/aa/job_1-1')
    expect((await listAll(store)).map((b) => b.key)).toEqual(['ws_1/aa/job_1-0', 'ws_2/bb/job_2-0'])
  })

  it('a store nothing was written to lists nothing', async () => {
    expect(await listAll(createFsBlobStore({ dir: path.join(dir, 'never-made') }))).toEqual([])
  })
})

describe('filesystem blob store: takeFile', () => {
  it('moves a stored file back out to a local path (undoing putFile): the key is gone, the bytes are there', async () => {
    const store = createFsBlobStore({ dir: path.join(dir, 'take') })
    const upload = path.join(dir, 'upload-take')
    writeFileSync(upload, 'the upload')
    await store.putFile('ws_1/aa/job_1-0', upload)
    expect(existsSync(upload)).toBe(false)
    await store.takeFile('ws_1/aa/job_1-0', upload)
    expect(readFileSync(upload, 'utf8')).toBe('the upload')
    expect(await store.exists('ws_1/aa/job_1-0')).toBe(false)
  })
})
