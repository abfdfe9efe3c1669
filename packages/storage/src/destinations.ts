import { randomBytes } from 'node:crypto'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { S3Client } from '@aws-sdk/client-s3'

/** Operator-configured places results are delivered to (`QUIRE_DESTINATIONS`), by the name pipelines use. */
export type DestinationConfig =
  | { type: 'dir'; path: string }
  | {
      type: 's3'
      bucket: string
      prefix?: string
      region: string
      endpoint?: string
      forcePathStyle?: boolean
      credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
    }
export type DestinationsConfig = Record<string, DestinationConfig>

export type Destinations = {
  /** Whether `name` is configured. */
  has(name: string): boolean
  /**
   * Writes `body` as `<fileName>` at destination `name`, replacing what a previous attempt wrote (a reader never sees
   * a partial file: directories get a rename, S3 a single PutObject). Throws when the destination is unknown,
   * unreachable or refuses the write.
   */
  write(name: string, fileName: string, body: string): Promise<void>
}

export function createDestinations(config: DestinationsConfig): Destinations {
  const s3Clients = new Map<string, Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }>>()
  const s3For = (name: string, d: Extract<DestinationConfig, { type: 's3' }>) => {
    let c = s3Clients.get(name)
    if (!c) {
      c = import('@aws-sdk/client-s3').then((s3) => ({
        s3,
        client: new s3.S3Client({
          region: d.region,
          endpoint: d.endpoint,
          forcePathStyle: d.forcePathStyle ?? false,
          credentials: d.credentials,
          maxAttempts: 2,
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
          logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
          requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
        }),
      }))
      s3Clients.set(name, c)
    }
    return c
  }
  return {
    has: (name) => Object.hasOwn(config, name),
    async write(name, fileName, body) {
      const d = Object.hasOwn(config, name) ? config[name] : undefined
      if (!d) throw new Error(`destination "${name}" is not configured (QUIRE_DESTINATIONS)`)
      if (fileName.includes('/') || fileName.includes('\\') || fileName.startsWith('.')) {
        throw new Error(`invalid destination file name: ${fileName}`)
      }
      if (d.type === 'dir') {
        const dir = path.resolve(d.path)
        await mkdir(dir, { recursive: true })
        const tmp = path.join(dir, `.${fileName}.${randomBytes(6).toString('hex')}.tmp`)
        try {
          await writeFile(tmp, body)
          await rename(tmp, path.join(dir, fileName))
        } catch (err) {
          await rm(tmp, { force: true })
          throw err
        }
        return
      }
      const { client, s3 } = await s3For(name, d)
      const prefix = d.prefix ? `${d.prefix.replace(/\/+$/, '')}/` : ''
      try {
        await client.send(
          new s3.PutObjectCommand({
            Bucket: d.bucket,
            Key: `${prefix}${fileName}`,
            Body: body,
            ContentType: 'application/json',
          }),
        )
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
        const why = status ? `S3 answered ${status} (${(err as Error).name})` : (err as Error).message
        throw new Error(`bucket "${d.bucket}" refused the write: ${why}`, { cause: err })
      }
    },
  }
}
