import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, symlinkSync, existsSync, truncateSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { DomainError } from '@quire/domain'
import { startS3Server, type S3TestServer } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBucketSources } from './bucket-source.ts'

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'quire-buckets-'))
const MB = 1024 * 1024

async function failure(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p
  } catch (err) {
    if (err instanceof DomainError) return err
    throw err
  }
  throw new Error('expected a DomainError')
}

describe('local bucket', () => {
  const root = tmp()
  const out = tmp()
  const outside = tmp()
  mkdirSync(path.join(root, 'in', 'nested'), { recursive: true })
  writeFileSync(path.join(root, 'in', 'nested', 'a.pdf'), '%PDF-1.4 hello')
  writeFileSync(path.join(outside, 'secret.txt'), 'secret')
  symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'in', 'link.txt'))
  mkdirSync(path.join(root, 'in', 'dir'))
  const buckets = createBucketSources({ docs: { type: 'local', dir: path.join(root, 'in') } })
  let n = 0
  const dest = () => path.join(out, `f${n++}`)

  it('copies an object to the destination and reports its size', async () => {
    const d = dest()
    const r = await buckets.fetchToFile('docs', 'nested/a.pdf', d, MB)
    expect(r.sizeBytes).toBe(14)
    expect(readFileSync(d, 'utf8')).toBe('%PDF-1.4 hello')
  })

  it('a missing object is OBJECT_NOT_FOUND, and so is a directory or a path through a file', async () => {
    for (const key of ['nested/missing.pdf', 'dir', 'nested/a.pdf/x', 'nope/a.pdf']) {
      const d = dest()
      const err = await failure(buckets.fetchToFile('docs', key, d, MB))
      expect(err.code).toBe('OBJECT_NOT_FOUND')
      expect(existsSync(d)).toBe(false)
    }
  })

  it('refuses keys that leave the bucket directory, including through a symbolic link', async () => {
    for (const key of ['../in-escape.txt', 'nested/../../x', '/etc/passwd', 'link.txt']) {
      const err = await failure(buckets.fetchToFile('docs', key, dest(), MB))
      expect(err.code, key).toBe('INVALID_PARAMETER')
    }
  })

  it('an object larger than the limit is FILE_TOO_LARGE before any byte is copied', async () => {
    const d = dest()
    const err = await failure(buckets.fetchToFile('docs', 'nested/a.pdf', d, 10))
    expect(err.code).toBe('FILE_TOO_LARGE')
    expect(existsSync(d)).toBe(false)
  })

  it('checks size by stat: a sparse 101 MB file is refused at once', async () => {
    const big = path.join(root, 'in', 'big.pdf')
    writeFileSync(big, '')
    truncateSync(big, 101 * MB)
    const err = await failure(buckets.fetchToFile('docs', 'big.pdf', dest(), 100 * MB))
    expect(err.code).toBe('FILE_TOO_LARGE')
  })

  it('an unknown bucket is UNKNOWN_BUCKET; a missing directory is BUCKET_UNAVAILABLE', async () => {
    expect((await failure(buckets.fetchToFile('other', 'a', dest(), MB))).code).toBe('UNKNOWN_BUCKET')
    const gone = createBucketSources({ gone: { type: 'local', dir: path.join(root, 'does-not-exist') } })
    expect((await failure(gone.fetchToFile('gone', 'a.pdf', dest(), MB))).code).toBe('BUCKET_UNAVAILABLE')
  })

  it('has() honours the optional workspace allow-list', () => {
    const b = createBucketSources({
      open: { type: 'local', dir: root },
      mine: { type: 'local', dir: root, workspaces: ['ws_1'] },
    })
    expect(b.has('open', 'ws_2')).toBe(true)
    expect(b.has('mine', 'ws_1')).toBe(true)
    expect(b.has('mine', 'ws_2')).toBe(false)
    expect(b.has('toString', 'ws_1')).toBe(false)
    expect(b.has('nope', 'ws_1')).toBe(false)
  })
})

describe('S3 bucket (s3rver as the S3-compatible endpoint, through the AWS SDK)', () => {
  let server: S3TestServer
  let endpoint: string
  const out = tmp()
  let n = 0
  const dest = () => path.join(out, `f${n++}`)
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

  beforeAll(async () => {
    server = await startS3Server({ buckets: ['incoming'] })
    endpoint = server.endpoint
    const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials })
    await client.send(new PutObjectCommand({ Bucket: 'incoming', Key: 'scans/2026/a.pdf', Body: '%PDF-1.4 from s3' }))
    client.destroy()
  })
  afterAll(async () => {
    await server?.close()
  })

  const sources = () =>
    createBucketSources({
      s3in: { type: 's3', bucket: 'incoming', region: 'us-east-1', endpoint, forcePathStyle: true, credentials },
      s3gone: {
        type: 's3',
        bucket: 'no-such-bucket',
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        credentials,
      },
      s3down: {
        type: 's3',
        bucket: 'incoming',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        forcePathStyle: true,
        credentials,
      },
    })

  it('streams an object put with the SDK to a file', async () => {
    const d = dest()
    const r = await sources().fetchToFile('s3in', 'scans/2026/a.pdf', d, MB)
    expect(r.sizeBytes).toBe(16)
    expect(readFileSync(d, 'utf8')).toBe('%PDF-1.4 from s3')
  })

  it('a missing key is OBJECT_NOT_FOUND; a missing bucket or unreachable server is BUCKET_UNAVAILABLE', async () => {
    const s = sources()
    expect((await failure(s.fetchToFile('s3in', 'scans/none.pdf', dest(), MB))).code).toBe('OBJECT_NOT_FOUND')
    expect((await failure(s.fetchToFile('s3gone', 'scans/2026/a.pdf', dest(), MB))).code).toBe('BUCKET_UNAVAILABLE')
    const down = await failure(s.fetchToFile('s3down', 'scans/2026/a.pdf', dest(), MB))
    expect(down.code).toBe('BUCKET_UNAVAILABLE')
    expect(down.message).not.toContain('127.0.0.1')
    expect((down as { cause?: unknown }).cause).toBeDefined()
  })

  it('checks the size with HEAD first: too large is FILE_TOO_LARGE and nothing is written', async () => {
    const d = dest()
    expect((await failure(sources().fetchToFile('s3in', 'scans/2026/a.pdf', d, 8))).code).toBe('FILE_TOO_LARGE')
    expect(existsSync(d)).toBe(false)
  })
})
