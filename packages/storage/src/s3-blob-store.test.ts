// The S3 blob store against a real S3-compatible HTTP server (s3rver) through the AWS SDK.
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { startS3Server, type S3TestServer } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { BlobStore } from './blob-store.ts'
import { createBlobStore } from './create-blob-store.ts'
import { createS3BlobStore } from './s3-blob-store.ts'

const BUCKET = 'quire-blobs'
const execFileAsync = promisify(execFile)
const MB = 1024 * 1024
let s3: S3TestServer
let client: S3Client
let dir: string

beforeAll(async () => {
  s3 = await startS3Server({ buckets: [BUCKET] })
  client = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials })
  dir = mkdtempSync(path.join(os.tmpdir(), 'quire-s3-blobs-'))
})

afterAll(async () => {
  client?.destroy()
  await s3?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

let n = 0
const tempFile = (content: string | Buffer) => {
  const p = path.join(dir, `upload-${n++}`)
  writeFileSync(p, content)
  return p
}
const storeWith = (extra: { prefix?: string; bucket?: string; cacheMaxAgeMs?: number; listPageSize?: number } = {}) => {
  const cacheDir = path.join(dir, `cache-${n++}`)
  const store = createS3BlobStore({
    bucket: extra.bucket ?? BUCKET,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    prefix: extra.prefix,
    cacheMaxAgeMs: extra.cacheMaxAgeMs,
    listPageSize: extra.listPageSize,
    cacheDir,
  })
  return { store, cacheDir }
}
const objectExists = async (Key: string) => {
  try {
    await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key }))
    return true
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false
    throw err
  }
}
const objectText = async (Key: string) =>
  (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key }))).Body!.transformToString()
const readAll = async (r: Readable) => {
  const chunks: Buffer[] = []
  for await (const c of r) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}
const rejection = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    return err as NodeJS.ErrnoException
  }
  throw new Error('expected a rejection')
}

describe('S3 blob store', () => {
  it('putFile uploads the file under its key and removes the temporary file', async () => {
    const { store } = storeWith()
    const tmp = tempFile('%PDF-1.4 first')
    await store.putFile('ws_1/job_1/0', tmp)
    expect(existsSync(tmp)).toBe(false)
    expect(await objectText('ws_1/job_1/0')).toBe('%PDF-1.4 first')
    expect(await store.exists('ws_1/job_1/0')).toBe(true)
  })

  it('localPath downloads to a cache file under cacheDir and reuses it', async () => {
    const { store, cacheDir } = storeWith()
    await store.putFile('ws_1/job_2/0', tempFile('cached bytes'))
    const p = await store.localPath('ws_1/job_2/0')
    expect(p.startsWith(cacheDir + path.sep)).toBe(true)
    expect(readFileSync(p, 'utf8')).toBe('cached bytes')
    const send = vi.spyOn(S3Client.prototype, 'send')
    try {
      // Present: no request at all; concurrent callers share one download.
      expect(await store.localPath('ws_1/job_2/0')).toBe(p)
      expect(send).not.toHaveBeenCalled()
      rmSync(p)
      const [a, b] = await Promise.all([store.localPath('ws_1/job_2/0'), store.localPath('ws_1/job_2/0')])
      expect(a).toBe(p)
      expect(b).toBe(p)
      expect(send.mock.calls.filter(([c]) => c instanceof GetObjectCommand)).toHaveLength(1)
    } finally {
      send.mockRestore()
    }
    // No partial download files are left beside it.
    expect(readdirSync(cacheDir)).toEqual([path.basename(p)])
  })

  it('read streams the object', async () => {
    const { store } = storeWith()
    await store.putFile('ws_1/job_3/0', tempFile('streamed content'))
    const r = store.read('ws_1/job_3/0')
    expect(r).toBeInstanceOf(Readable)
    expect((await readAll(r)).toString()).toBe('streamed content')
  })

  it('delete removes the object and the cached copy; deleting twice is fine', async () => {
    const { store } = storeWith()
    await store.putFile('ws_1/job_4/0', tempFile('to delete'))
    const p = await store.localPath('ws_1/job_4/0')
    await store.delete('ws_1/job_4/0')
    expect(existsSync(p)).toBe(false)
    expect(await objectExists('ws_1/job_4/0')).toBe(false)
    expect(await store.exists('ws_1/job_4/0')).toBe(false)
    await store.delete('ws_1/job_4/0')
  })

  it('takeFile gives the object back as a local file (undoing putFile) and deletes the object', async () => {
    const { store, cacheDir } = storeWith()
    const tmp = tempFile('given back')
    await store.putFile('ws_1/job_5/0', tmp)
    await store.takeFile('ws_1/job_5/0', tmp)
    expect(readFileSync(tmp, 'utf8')).toBe('given back')
    expect(await objectExists('ws_1/job_5/0')).toBe(false)
    expect(readdirSync(cacheDir)).toEqual([])
  })

  it('a missing key: exists is false, localPath and read fail with ENOENT, and no cache file is left', async () => {
    const { store, cacheDir } = storeWith()
    expect(await store.exists('ws_1/none/0')).toBe(false)
    const err = await rejection(store.localPath('ws_1/none/0'))
    expect(err.code).toBe('ENOENT')
    expect(err.message).toContain('ws_1/none/0')
    expect(existsSync(cacheDir) ? readdirSync(cacheDir) : []).toEqual([])
    const readErr = await rejection(readAll(store.read('ws_1/none/0')))
    expect(readErr.code).toBe('ENOENT')
  })

  it('a missing bucket is an error, not "the object does not exist"', async () => {
    const { store } = storeWith({ bucket: 'no-such-bucket' })
    const err = await rejection(store.exists('ws_1/job/0'))
    expect(err.message).toContain('no-such-bucket')
    const tmp = tempFile('x')
    await rejection(store.putFile('ws_1/job/0', tmp))
    // A failed upload keeps the temporary file (the caller owns and removes it).
    expect(existsSync(tmp)).toBe(true)
  })

  it('prefix: keys are stored under it (with or without the slash) and used for every operation', async () => {
    for (const prefix of ['tenant-a', 'tenant-b/']) {
      const { store } = storeWith({ prefix })
      await store.putFile('ws_1/job_5/0', tempFile(`under ${prefix}`))
      const Key = `${prefix.replace(/\/$/, '')}/ws_1/job_5/0`
      expect(await objectText(Key)).toBe(`under ${prefix}`)
      expect(await store.exists('ws_1/job_5/0')).toBe(true)
      expect(readFileSync(await store.localPath('ws_1/job_5/0'), 'utf8')).toBe(`under ${prefix}`)
      expect((await readAll(store.read('ws_1/job_5/0'))).toString()).toBe(`under ${prefix}`)
      await store.delete('ws_1/job_5/0')
      expect(await objectExists(Key)).toBe(false)
    }
    expect(await objectExists('ws_1/job_5/0')).toBe(false)
  })

  it('reads objects written by others (e.g. another process) the same way', async () => {
    const { store } = storeWith()
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ws_2/job_1/0', Body: 'from elsewhere' }))
    expect(await store.exists('ws_2/job_1/0')).toBe(true)
    expect(readFileSync(await store.localPath('ws_2/job_1/0'), 'utf8')).toBe('from elsewhere')
  })

  it('cached copies unused for longer than cacheMaxAgeMs are pruned', async () => {
    const { store, cacheDir } = storeWith({ cacheMaxAgeMs: 1_000 })
    await store.putFile('ws_3/job_1/0', tempFile('old'))
    await store.putFile('ws_3/job_2/0', tempFile('new'))
    const old = await store.localPath('ws_3/job_1/0')
    const past = new Date(Date.now() - 60_000)
    utimesSync(old, past, past)
    // Pruning runs at most once per cacheMaxAgeMs, on use or on an unref'd timer.
    await new Promise((r) => setTimeout(r, 1_100))
    const fresh = await store.localPath('ws_3/job_2/0')
    await vi.waitFor(() => expect(existsSync(old)).toBe(false), { timeout: 3_000 })
    expect(existsSync(fresh)).toBe(true)
    expect(readdirSync(cacheDir)).toEqual([path.basename(fresh)])
  })
})

describe('S3 blob store: list', () => {
  it('lists every object under the prefix as keys without it, across pages, with its modification time', async () => {
    const { store } = storeWith({ prefix: 'listed', listPageSize: 2 })
    const keys = ['ws_1/aa/job_1-0', 'ws_1/aa/job_1-1', 'ws_1/bb/job_2-0', 'ws_2/cc/job_3-0', 'ws_2/dd/job_4-0']
    const before = Date.now() - 5_000
    for (const k of keys) await store.putFile(k, tempFile(k))
    // Outside the prefix: another tenant's object and one whose name merely starts like the prefix.
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'listed-not/ws_1/x', Body: 'other' }))
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'elsewhere/ws_1/x', Body: 'other' }))
    const listed = []
    for await (const b of store.list()) listed.push(b)
    expect(listed.map((b) => b.key).sort()).toEqual(keys)
    for (const b of listed) {
      expect(b.modifiedAt.getTime()).toBeGreaterThan(before)
      expect(b.modifiedAt.getTime()).toBeLessThanOrEqual(Date.now() + 5_000)
    }
    await store.delete(keys[0]!)
    const after = []
    for await (const b of store.list()) after.push(b.key)
    expect(after.sort()).toEqual(keys.slice(1))
  })

  it('a missing bucket is an error naming it', async () => {
    const { store } = storeWith({ bucket: 'no-such-bucket' })
    const err = await rejection(
      (async () => {
        for await (const _ of store.list()) break
      })(),
    )
    expect(err.message).toContain('no-such-bucket')
  })
})

describe('S3 blob store: a 20 MB file never sits whole in memory', () => {
  const bigFile = (name: string) => {
    const p = path.join(dir, name)
    const fd = openSync(p, 'w')
    const chunk = randomBytes(MB)
    for (let i = 0; i < 20; i++) writeSync(fd, chunk)
    closeSync(fd)
    return p
  }

  it('round trip putFile → localPath → read through streamed requests', async () => {
    const { store } = storeWith()
    const src = bigFile('big.bin')
    const upload = path.join(dir, 'big-upload.bin')
    copyFileSync(src, upload)
    const send = vi.spyOn(S3Client.prototype, 'send')
    try {
      await store.putFile('ws_big/job/0', upload)
      // The upload's body is a file stream with its length, never a buffer.
      const put = send.mock.calls.map(([c]) => c).find((c) => c instanceof PutObjectCommand) as PutObjectCommand
      expect(put.input.Body).toBeInstanceOf(Readable)
      expect(put.input.ContentLength).toBe(20 * MB)
    } finally {
      send.mockRestore()
    }
    expect((await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'ws_big/job/0' }))).ContentLength).toBe(
      20 * MB,
    )
    const local = await store.localPath('ws_big/job/0')
    const digest = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex')
    expect(statSync(local).size).toBe(20 * MB)
    expect(digest(local)).toBe(digest(src))
    let bytes = 0
    for await (const c of store.read('ws_big/job/0')) bytes += (c as Buffer).length
    expect(bytes).toBe(20 * MB)
  }, 60_000)

  it('live memory of the process using the store grows far less than the file (measured in a process of its own)', async () => {
    const warmFile = tempFile('warm')
    const bigCopy = bigFile('probe-src.bin')
    const big = path.join(dir, 'probe-upload.bin')
    copyFileSync(bigCopy, big)
    const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), 's3-blob-store.memory-probe.ts')
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }
    env.PROBE = JSON.stringify({
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: BUCKET,
      credentials: s3.credentials,
      cacheDir: path.join(dir, 'probe-cache'),
      warmFile,
      bigFile: big,
      bigCopy,
    })
    const { stdout } = await execFileAsync(
      process.execPath,
      ['--conditions=@quire/source', '--expose-gc', '--single-threaded-gc', '--import', 'tsx', probe],
      { env, timeout: 60_000 },
    )
    const r = JSON.parse(stdout.trim().split('\n').pop()!) as Record<
      'putGrowth' | 'localPathGrowth' | 'readGrowth' | 'heldGrowth',
      number
    >
    // The measurement sees a file held whole...
    expect(r.heldGrowth, JSON.stringify(r)).toBeGreaterThan(18 * MB)
    // ...and the store's transfers stay far below that (stream buffers: a few hundred kB).
    expect(r.putGrowth, JSON.stringify(r)).toBeLessThan(4 * MB)
    expect(r.localPathGrowth, JSON.stringify(r)).toBeLessThan(4 * MB)
    expect(r.readGrowth, JSON.stringify(r)).toBeLessThan(4 * MB)
  }, 90_000)
})

describe('createBlobStore', () => {
  it('fs: a filesystem store in the directory', async () => {
    const fsDir = path.join(dir, 'fs-store')
    const store: BlobStore = createBlobStore({ type: 'fs', dir: fsDir })
    await store.putFile('a/b', tempFile('on disk'))
    expect(readFileSync(path.join(fsDir, 'a', 'b'), 'utf8')).toBe('on disk')
  })

  it('s3: an S3 store with the options given', async () => {
    const store = createBlobStore({
      type: 's3',
      bucket: BUCKET,
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: s3.credentials,
      prefix: 'factory',
      cacheDir: path.join(dir, 'factory-cache'),
    })
    await store.putFile('a/b', tempFile('in s3'))
    expect(await objectText('factory/a/b')).toBe('in s3')
  })
})
