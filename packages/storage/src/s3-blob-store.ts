import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { S3Client } from '@aws-sdk/client-s3'
import { type BlobStore, moveFile, type StoredBlob } from './blob-store.ts'

export type S3BlobStoreOptions = {
  bucket: string
  region: string
  /** An S3-compatible server (MinIO, Ceph, R2, ...); usually with `forcePathStyle: true`. */
  endpoint?: string
  forcePathStyle?: boolean
  /** Absent: the AWS SDK's default credential chain (environment, shared config, instance/task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  /** A "folder" every key is stored under: `quire` (or `quire/`) stores key `a/b` as `quire/a/b`. Default: none. */
  prefix?: string
  /** Local copies made by `localPath` (PDF and OCR libraries need a path). */
  cacheDir: string
  /** A cached copy not used for this long is deleted (it is always deleted with its object). Default 1 hour. */
  cacheMaxAgeMs?: number
  connectTimeoutMs?: number
  /** Socket inactivity allowed during a request. */
  requestTimeoutMs?: number
  /** Attempts per request (uploads are retried by the store itself, with a fresh file stream). */
  maxAttempts?: number
  /** Keys asked for per ListObjectsV2 request by `list` (S3's own limit and default: 1000). */
  listPageSize?: number
}

type S3Failure = { name?: string; code?: string; $metadata?: { httpStatusCode?: number } }
const s3Status = (err: unknown) => (err as S3Failure | undefined)?.$metadata?.httpStatusCode
const isNotFound = (err: unknown) => {
  const name = (err as S3Failure | undefined)?.name
  return name === 'NoSuchKey' || name === 'NotFound' || (s3Status(err) === 404 && name !== 'NoSuchBucket')
}
/** Worth another attempt: throttling, server errors, and failures without an HTTP answer (network). */
const retryable = (err: unknown) => {
  const status = s3Status(err)
  return status === undefined || status === 408 || status === 429 || status >= 500
}

/** The error a missing blob gives, like the filesystem store's (`code: 'ENOENT'`). */
export function blobNotFound(key: string, cause?: unknown): Error {
  return Object.assign(new Error(`no blob "${key}" in the store`, { cause }), { code: 'ENOENT' })
}

function storeError(action: string, key: string, bucket: string, cause: unknown): Error {
  const status = s3Status(cause)
  const why = status
    ? `S3 answered ${status} (${(cause as S3Failure).name ?? 'error'})`
    : ((cause as Error)?.message ?? String(cause))
  return new Error(`blob store: could not ${action} "${key}" in bucket "${bucket}": ${why}`, { cause })
}

/**
 * A BlobStore in an S3 bucket (or an S3-compatible server). Uploads stream the local file (PutObject with its
 * length, never the whole file in memory); `localPath` streams the object into a cache file, reused while present.
 * Keys are immutable in Quire (one key per job file), so a cached copy never goes stale.
 */
export function createS3BlobStore(opts: S3BlobStoreOptions): BlobStore {
  const Bucket = opts.bucket
  const prefix = normalizePrefix(opts.prefix)
  const cacheDir = path.resolve(opts.cacheDir)
  const cacheMaxAgeMs = opts.cacheMaxAgeMs ?? 3_600_000
  const attempts = Math.max(1, opts.maxAttempts ?? 3)
  const objectKey = (key: string) => {
    if (key.length === 0 || key.includes('\u0000')) throw new Error('blob key must be a non-empty string')
    return prefix + key
  }
  const cachePath = (key: string) => path.join(cacheDir, createHash('sha256').update(objectKey(key)).digest('hex'))

  // The SDK is loaded on first use, so processes that only use local storage never pay for it.
  let sdk: Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }> | undefined
  const connect = () =>
    (sdk ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        region: opts.region,
        endpoint: opts.endpoint,
        forcePathStyle: opts.forcePathStyle ?? false,
        credentials: opts.credentials,
        maxAttempts: attempts,
        // Checksums only where S3 requires them: S3-compatible servers differ in their support of the newer
        // trailing-checksum uploads, and uploads are length-checked anyway.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        // The store retries failed uploads itself (fresh stream), so the SDK's note on not retrying them is noise.
        logger: {
          debug: () => {},
          info: () => {},
          warn: (...args: unknown[]) => {
            if (!String(args[0]).includes('non-retryable streaming request')) console.warn(...args)
          },
          // Every failed request is logged at this level; the store's own errors carry what matters.
          error: () => {},
        },
        requestHandler: {
          connectionTimeout: opts.connectTimeoutMs ?? 5_000,
          requestTimeout: opts.requestTimeoutMs ?? 60_000,
        },
      }),
    })))

  /** One download per key at a time in this process; other processes are kept apart by the atomic rename. */
  const downloads = new Map<string, Promise<string>>()

  let lastPrune = Date.now()
  let pruneTimer: NodeJS.Timeout | undefined
  async function pruneCache() {
    lastPrune = Date.now()
    let names: string[]
    try {
      names = await readdir(cacheDir)
    } catch {
      return
    }
    const cutoff = Date.now() - cacheMaxAgeMs
    for (const name of names) {
      const p = path.join(cacheDir, name)
      const st = await stat(p).catch(() => undefined)
      if (st?.isFile() && st.mtimeMs < cutoff) await rm(p, { force: true }).catch(() => {})
    }
  }
  const schedulePrune = () => {
    if (pruneTimer) return
    // Unref'd: it never keeps a process alive.
    pruneTimer = setInterval(() => void pruneCache(), Math.max(1_000, Math.min(cacheMaxAgeMs / 4, 600_000)))
    pruneTimer.unref()
  }

  async function download(key: string, dest: string): Promise<string> {
    const { client, s3 } = await connect()
    await mkdir(cacheDir, { recursive: true })
    const part = `${dest}.${randomBytes(6).toString('hex')}.part`
    try {
      let body: Readable
      try {
        const got = await client.send(new s3.GetObjectCommand({ Bucket, Key: objectKey(key) }))
        body = got.Body as Readable
      } catch (err) {
        if (isNotFound(err)) throw blobNotFound(key, err)
        throw storeError('download', key, Bucket, err)
      }
      try {
        await pipeline(body, createWriteStream(part, { flags: 'wx' }))
      } catch (err) {
        throw storeError('download', key, Bucket, err)
      }
      await rename(part, dest)
      schedulePrune()
      return dest
    } finally {
      await rm(part, { force: true })
    }
  }

  return {
    async putFile(key, fromPath) {
      const Key = objectKey(key)
      const { client, s3 } = await connect()
      const { size } = await stat(fromPath)
      for (let attempt = 1; ; attempt++) {
        // A fresh stream per attempt: the SDK does not retry streamed bodies itself.
        const Body = createReadStream(fromPath)
        try {
          await client.send(new s3.PutObjectCommand({ Bucket, Key, Body, ContentLength: size }))
          break
        } catch (err) {
          Body.destroy()
          if (attempt >= attempts || !retryable(err)) throw storeError('upload', key, Bucket, err)
          await new Promise((r) => setTimeout(r, 200 * 2 ** (attempt - 1)))
        }
      }
      await rm(cachePath(key), { force: true })
      await rm(fromPath, { force: true })
    },

    async takeFile(key, toPath) {
      // A rare path (a submission served again): through the local copy, then the object goes.
      await moveFile(await download(key, cachePath(key)), toPath)
      await this.delete(key)
    },

    async localPath(key) {
      const dest = cachePath(key)
      if (Date.now() - lastPrune > cacheMaxAgeMs) void pruneCache()
      // Registered before any await, so concurrent callers share one lookup and at most one download.
      let pending = downloads.get(dest)
      if (!pending) {
        pending = (async () => {
          const st = await stat(dest).catch(() => undefined)
          if (st?.isFile()) {
            // Used again: the unused-copy pruning counts from now.
            const now = new Date()
            await utimes(dest, now, now).catch(() => {})
            return dest
          }
          return download(key, dest)
        })().finally(() => downloads.delete(dest))
        downloads.set(dest, pending)
      }
      return pending
    },

    read(key) {
      const Key = objectKey(key)
      // Lazy: the GET starts when the stream is first read; destroying the stream destroys the response body.
      async function* chunks(): AsyncGenerator<Buffer> {
        const { client, s3 } = await connect()
        let body: Readable
        try {
          const got = await client.send(new s3.GetObjectCommand({ Bucket, Key }))
          body = got.Body as Readable
        } catch (err) {
          if (isNotFound(err)) throw blobNotFound(key, err)
          throw storeError('read', key, Bucket, err)
        }
        yield* body
      }
      return Readable.from(chunks(), { objectMode: false })
    },

    async delete(key) {
      const Key = objectKey(key)
      const { client, s3 } = await connect()
      try {
        // S3 answers a missing key with success too.
        await client.send(new s3.DeleteObjectCommand({ Bucket, Key }))
      } catch (err) {
        if (!isNotFound(err)) throw storeError('delete', key, Bucket, err)
      }
      await rm(cachePath(key), { force: true })
    },

    async exists(key) {
      const Key = objectKey(key)
      const { client, s3 } = await connect()
      try {
        await client.send(new s3.HeadObjectCommand({ Bucket, Key }))
        return true
      } catch (err) {
        // A HEAD 404 has no body: a missing bucket looks the same, so check it rather than report "no object".
        if (s3Status(err) === 404) {
          try {
            await client.send(new s3.HeadBucketCommand({ Bucket }))
          } catch (bucketErr) {
            throw storeError('check', key, Bucket, bucketErr)
          }
          return false
        }
        throw storeError('check', key, Bucket, err)
      }
    },

    async *list(): AsyncGenerator<StoredBlob> {
      const { client, s3 } = await connect()
      let ContinuationToken: string | undefined
      do {
        let page: import('@aws-sdk/client-s3').ListObjectsV2CommandOutput
        try {
          page = await client.send(
            new s3.ListObjectsV2Command({
              Bucket,
              Prefix: prefix || undefined,
              ContinuationToken,
              MaxKeys: opts.listPageSize,
            }),
          )
        } catch (err) {
          throw storeError('list', prefix || '/', Bucket, err)
        }
        for (const o of page.Contents ?? []) {
          // Without a date (S3 always gives one) an object counts as new: a sweep by age leaves it alone.
          if (o.Key?.startsWith(prefix) && o.Key.length > prefix.length)
            yield { key: o.Key.slice(prefix.length), modifiedAt: o.LastModified ?? new Date() }
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
      } while (ContinuationToken)
    },
  }
}

function normalizePrefix(prefix: string | undefined): string {
  const p = (prefix ?? '').replace(/^\/+|\/+$/g, '')
  return p ? `${p}/` : ''
}
