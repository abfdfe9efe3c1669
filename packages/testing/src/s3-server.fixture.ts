import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import S3rver from 's3rver'

export type S3TestServer = {
  /** http://127.0.0.1:<port>; use with `forcePathStyle: true`. */
  endpoint: string
  region: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  close(): Promise<void>
}

/** A real S3-compatible HTTP server (s3rver) on a free local port, with the given buckets created empty. */
export async function startS3Server(opts: { buckets: string[] }): Promise<S3TestServer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'quire-s3rver-'))
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: opts.buckets.map((name) => ({ name, configs: [] })),
  })
  const { port } = await server.run()
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    // s3rver accepts these fixed credentials (and checks the SigV4 signature made with them).
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async close() {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
