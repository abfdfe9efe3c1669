import { createWriteStream } from 'node:fs'
import { open, realpath, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { S3Client } from '@aws-sdk/client-s3'
import { DomainError } from '@quire/domain'

/** A directory on the API host, read as a bucket: keys are slash-separated paths relative to `dir`. */
export type LocalBucketConfig = { type: 'local'; dir: string; workspaces?: string[] }

/** An S3 bucket, or a bucket of an S3-compatible server (`endpoint`, usually with `forcePathStyle`). */
export type S3BucketConfig = {
  type: 's3'
  bucket: string
  region: string
  endpoint?: string
  forcePathStyle?: boolean
  /** Absent: the AWS SDK's default credential chain (environment, shared config, instance/task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  workspaces?: string[]
}

export type BucketConfig = LocalBucketConfig | S3BucketConfig

/** Operator-connected buckets by the name clients use in requests. */
export type BucketsConfig = Record<string, BucketConfig>

export type BucketSources = {
  /** Whether `bucket` is connected and usable by `workspaceId` (a bucket without `workspaces` serves every workspace). */
  has(bucket: string, workspaceId?: string): boolean
  /**
   * Copies one object to `destPath`, streaming (never whole in memory). The size is checked before any byte is
   * copied (stat / HEAD) and again while copying. Failures are DomainErrors: UNKNOWN_BUCKET, INVALID_PARAMETER (a
   * key that leaves a local bucket), OBJECT_NOT_FOUND, FILE_TOO_LARGE, BUCKET_UNAVAILABLE (with `cause`). A partial
   * `destPath` is removed on failure.
   */
  fetchToFile(bucket: string, key: string, destPath: string, maxBytes: number): Promise<{ sizeBytes: number }>
}

type Source = { fetch(key: string, destPath: string, maxBytes: number): Promise<{ sizeBytes: number }> }

export type BucketSourceOptions = {
  /** S3: time allowed to open a connection, and socket inactivity allowed during a request. */
  connectTimeoutMs?: number
  requestTimeoutMs?: number
  /** S3: attempts per request (the SDK retries throttling, 5xx and network errors). */
  maxAttempts?: number
}

export function createBucketSources(config: BucketsConfig, opts: BucketSourceOptions = {}): BucketSources {
  const sources = new Map<string, Source>()
  for (const [name, c] of Object.entries(config))
    sources.set(name, c.type === 'local' ? localSource(name, c) : s3Source(name, c, opts))
  const has = (bucket: string, workspaceId?: string) => {
    const c = Object.hasOwn(config, bucket) ? config[bucket] : undefined
    if (!c) return false
    return !c.workspaces || (workspaceId !== undefined && c.workspaces.includes(workspaceId))
  }
  return {
    has,
    async fetchToFile(bucket, key, destPath, maxBytes) {
      const source = sources.get(bucket)
      if (!source) throw new DomainError('UNKNOWN_BUCKET', `no bucket named "${bucket}" is connected`, { bucket })
      if (key.length === 0 || key.includes('\u0000'))
        throw new DomainError('INVALID_PARAMETER', 'key must be a non-empty object key')
      try {
        return await source.fetch(key, destPath, maxBytes)
      } catch (err) {
        await rm(destPath, { force: true })
        throw err
      }
    },
  }
}

const tooLarge = (key: string, maxBytes: number) =>
  new DomainError(
    'FILE_TOO_LARGE',
    `object "${key}" exceeds the size limit (${Math.floor(maxBytes / (1024 * 1024))} MB per file)`,
  )

const notFound = (bucket: string, key: string) =>
  new DomainError('OBJECT_NOT_FOUND', `no object "${key}" in bucket "${bucket}"`, { bucket, key })

/** BUCKET_UNAVAILABLE keeps the underlying error as `cause` for the operator's log; clients see no internals. */
export function bucketUnavailable(bucket: string, why: string, cause: unknown): DomainError {
  return Object.assign(new DomainError('BUCKET_UNAVAILABLE', `bucket "${bucket}" is unavailable: ${why}`, { bucket }), {
    cause,
  })
}

/** Counts bytes through a stream and fails it once more than `maxBytes` went by. */
function byteLimit(maxBytes: number, onTooLarge: () => Error): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      t.bytes += chunk.length
      if (t.bytes > maxBytes) cb(onTooLarge())
      else cb(null, chunk)
    },
  }) as Transform & { bytes: number }
  t.bytes = 0
  return t
}

const errnoCode = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code

function localSource(name: string, c: LocalBucketConfig): Source {
  const root = path.resolve(c.dir)
  const inside = (base: string, p: string) => p.startsWith(base.endsWith(path.sep) ? base : base + path.sep)
  return {
    async fetch(key, destPath, maxBytes) {
      const target = path.resolve(root, key)
      if (!inside(root, target))
        throw new DomainError('INVALID_PARAMETER', `key "${key}" leaves the bucket`, { bucket: name, key })
      let realRoot: string
      try {
        realRoot = await realpath(root)
      } catch (err) {
        throw bucketUnavailable(name, 'its directory cannot be read', err)
      }
      let realTarget: string
      try {
        realTarget = await realpath(target)
      } catch (err) {
        const code = errnoCode(err)
        if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(name, key)
        throw bucketUnavailable(name, 'the object cannot be read', err)
      }
      // A symbolic link inside the directory must not lead out of it.
      if (!inside(realRoot, realTarget))
        throw new DomainError('INVALID_PARAMETER', `key "${key}" leaves the bucket`, { bucket: name, key })
      const st = await stat(realTarget).catch((err) => {
        throw bucketUnavailable(name, 'the object cannot be read', err)
      })
      if (!st.isFile()) throw notFound(name, key)
      if (st.size > maxBytes) throw tooLarge(key, maxBytes)
      let handle
      try {
        handle = await open(realTarget, 'r')
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') throw notFound(name, key)
        throw bucketUnavailable(name, 'the object cannot be read', err)
      }
      const limit = byteLimit(maxBytes, () => tooLarge(key, maxBytes))
      try {
        await pipeline(handle.createReadStream(), limit, createWriteStream(destPath, { flags: 'wx' }))
      } catch (err) {
        if (err instanceof DomainError) throw err
        throw bucketUnavailable(name, 'the object could not be copied', err)
      } finally {
        await handle.close().catch(() => {})
      }
      return { sizeBytes: limit.bytes }
    },
  }
}

type S3Failure = { name?: string; $metadata?: { httpStatusCode?: number } }
const s3Status = (err: unknown) => (err as S3Failure | undefined)?.$metadata?.httpStatusCode

function s3Source(name: string, c: S3BucketConfig, opts: BucketSourceOptions): Source {
  // The SDK is loaded on first use, so processes that only use local storage never pay for it.
  let sdk: Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }> | undefined
  const connect = () =>
    (sdk ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        region: c.region,
        endpoint: c.endpoint,
        forcePathStyle: c.forcePathStyle ?? false,
        credentials: c.credentials,
        maxAttempts: opts.maxAttempts ?? 2,
        requestHandler: {
          connectionTimeout: opts.connectTimeoutMs ?? 5_000,
          requestTimeout: opts.requestTimeoutMs ?? 30_000,
        },
      }),
    })))
  const Bucket = c.bucket

  /** A 404 on HEAD carries no body: it is the object only if the bucket itself answers. */
  async function missing(key: string): Promise<DomainError> {
    const { client, s3 } = await connect()
    try {
      await client.send(new s3.HeadBucketCommand({ Bucket }))
    } catch (bucketErr) {
      return bucketUnavailable(
        name,
        s3Status(bucketErr) === 404 ? 'the bucket does not exist' : 'the bucket does not answer',
        bucketErr,
      )
    }
    return notFound(name, key)
  }

  function failure(err: unknown): DomainError {
    const status = s3Status(err)
    if (status === 403) return bucketUnavailable(name, 'access denied', err)
    if ((err as S3Failure | undefined)?.name === 'NoSuchBucket')
      return bucketUnavailable(name, 'the bucket does not exist', err)
    return bucketUnavailable(
      name,
      status ? `the storage service answered ${status}` : 'the storage service cannot be reached',
      err,
    )
  }

  return {
    async fetch(key, destPath, maxBytes) {
      if (Buffer.byteLength(key) > 1024) throw new DomainError('INVALID_PARAMETER', 'key is longer than 1024 bytes')
      const { client, s3 } = await connect()
      let size: number
      let etag: string | undefined
      try {
        const head = await client.send(new s3.HeadObjectCommand({ Bucket, Key: key }))
        size = head.ContentLength ?? 0
        etag = head.ETag
      } catch (err) {
        if (s3Status(err) === 404) throw await missing(key)
        throw failure(err)
      }
      if (size > maxBytes) throw tooLarge(key, maxBytes)
      let body: Readable
      try {
        // IfMatch: the bytes copied are those of the object whose size was checked.
        const got = await client.send(new s3.GetObjectCommand({ Bucket, Key: key, IfMatch: etag }))
        body = got.Body as Readable
      } catch (err) {
        const status = s3Status(err)
        if ((err as S3Failure).name === 'NoSuchBucket') throw failure(err)
        if (status === 404 || (err as S3Failure).name === 'NoSuchKey') throw notFound(name, key)
        if (status === 412) throw bucketUnavailable(name, 'the object changed while it was being read; try again', err)
        throw failure(err)
      }
      const limit = byteLimit(maxBytes, () => tooLarge(key, maxBytes))
      try {
        await pipeline(body, limit, createWriteStream(destPath, { flags: 'wx' }))
      } catch (err) {
        if (err instanceof DomainError) throw err
        throw bucketUnavailable(name, 'the object could not be downloaded', err)
      }
      return { sizeBytes: limit.bytes }
    },
  }
}
