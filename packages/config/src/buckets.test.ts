import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseBucketsEnv } from './buckets.ts'

describe('QUIRE_BUCKETS', () => {
  it('is empty when unset or blank', () => {
    expect(parseBucketsEnv(undefined)).toEqual({})
    expect(parseBucketsEnv('  ')).toEqual({})
  })

  it('reads local and S3 buckets, with defaults and absolute directories', () => {
    const b = parseBucketsEnv(
      JSON.stringify({
        in: { type: 'local', dir: './incoming' },
        s3: { type: 's3', bucket: 'acme-docs' },
        minio: {
          type: 's3',
          bucket: 'docs',
          region: 'eu-west-1',
          endpoint: 'https://minio.internal:9000',
          force_path_style: true,
          access_key_id: 'AK',
          secret_access_key: 'SK',
          workspaces: ['ws_1'],
        },
      }),
    )
    expect(b.in).toEqual({ type: 'local', dir: path.resolve('./incoming'), workspaces: undefined })
    expect(b.s3).toMatchObject({
      type: 's3',
      bucket: 'acme-docs',
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: undefined,
    })
    expect(b.minio).toMatchObject({
      endpoint: 'https://minio.internal:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
      workspaces: ['ws_1'],
    })
  })

  it('fails with a message naming the variable and the bad path', () => {
    expect(() => parseBucketsEnv('{in:')).toThrow(/^QUIRE_BUCKETS is not valid JSON/)
    expect(() => parseBucketsEnv('{"in":{"type":"ftp"}}')).toThrow(/QUIRE_BUCKETS is invalid: in\.type/)
    expect(() => parseBucketsEnv('{"in":{"type":"local"}}')).toThrow(/in\.dir/)
    expect(() => parseBucketsEnv('{"in":{"type":"local","dir":"/x","dri":"/y"}}')).toThrow(/dri/)
    expect(() => parseBucketsEnv('{"s":{"type":"s3","bucket":"b","access_key_id":"AK"}}')).toThrow(/secret_access_key/)
    expect(() => parseBucketsEnv('{"s":{"type":"s3","bucket":"b","endpoint":"ftp://x"}}')).toThrow(/s\.endpoint/)
    expect(() => parseBucketsEnv('{"bad name":{"type":"local","dir":"/x"}}')).toThrow(/bucket names/)
    expect(() => parseBucketsEnv('[]')).toThrow(/QUIRE_BUCKETS is invalid/)
  })
})
