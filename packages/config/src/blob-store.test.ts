import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BlobStoreEnv, blobStoreConfig } from './blob-store.ts'
import { ConfigError } from './env.ts'

const parse = (env: Record<string, string>) => blobStoreConfig(BlobStoreEnv.parse(env))

describe('blobStoreConfig', () => {
  it('defaults to the filesystem store in ./.data/blobs', () => {
    expect(parse({})).toEqual({ type: 'fs', dir: path.resolve('.data/blobs') })
    expect(parse({ QUIRE_BLOB_STORE: 'fs', QUIRE_BLOB_DIR: '/srv/blobs', QUIRE_BLOB_S3: '' })).toEqual({
      type: 'fs',
      dir: '/srv/blobs',
    })
  })

  it('s3: maps the JSON object; the cache lives under QUIRE_BLOB_DIR', () => {
    const c = parse({
      QUIRE_BLOB_STORE: 's3',
      QUIRE_BLOB_DIR: '/var/quire',
      QUIRE_BLOB_S3: JSON.stringify({
        bucket: 'docs',
        region: 'eu-west-1',
        endpoint: 'https://minio.internal:9000',
        force_path_style: true,
        access_key_id: 'AK',
        secret_access_key: 'SK',
        prefix: 'quire/',
      }),
    })
    expect(c).toEqual({
      type: 's3',
      bucket: 'docs',
      region: 'eu-west-1',
      endpoint: 'https://minio.internal:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK', sessionToken: undefined },
      prefix: 'quire/',
      cacheDir: '/var/quire/s3-cache',
    })
  })

  it('s3: only the bucket is required; no keys means the AWS default credential chain', () => {
    expect(parse({ QUIRE_BLOB_STORE: 'S3', QUIRE_BLOB_S3: '{"bucket":"b"}' })).toMatchObject({
      type: 's3',
      bucket: 'b',
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: undefined,
      endpoint: undefined,
      prefix: undefined,
    })
  })

  it('refuses bad configuration with a message naming the variable and the entry', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ QUIRE_BLOB_STORE: 'gcs' }, /QUIRE_BLOB_STORE must be "fs" or "s3", not "gcs"/],
      [{ QUIRE_BLOB_STORE: 's3' }, /QUIRE_BLOB_STORE=s3 needs QUIRE_BLOB_S3/],
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{bucket:' }, /QUIRE_BLOB_S3 is not valid JSON/],
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{}' }, /QUIRE_BLOB_S3 is invalid: bucket:/],
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '["b"]' }, /QUIRE_BLOB_S3 is invalid: \(root\)/],
      [
        { QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{"bucket":"b","buckett":"x"}' },
        /QUIRE_BLOB_S3 is invalid: .*buckett/,
      ],
      [
        { QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{"bucket":"b","endpoint":"ftp://x"}' },
        /QUIRE_BLOB_S3 is invalid: endpoint:/,
      ],
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{"bucket":"b","force_path_style":"yes"}' }, /force_path_style/],
      [
        { QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{"bucket":"b","access_key_id":"AK"}' },
        /both access_key_id and secret_access_key/,
      ],
      [{ QUIRE_BLOB_S3: '{"bucket":"b"}' }, /QUIRE_BLOB_S3 is set but QUIRE_BLOB_STORE is not "s3"/],
    ]
    for (const [env, message] of cases) {
      expect(() => parse(env), JSON.stringify(env)).toThrow(message)
      // A configuration error: the process stops with exit code 78 instead of being restarted.
      expect(() => parse(env), JSON.stringify(env)).toThrow(ConfigError)
    }
  })
})
