import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export type S3TestServer = {
  /** http://127.0.0.1:<port>; use with `forcePathStyle: true`. */
  endpoint: string
  region: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  close(): Promise<void>
}

const CHILD = fileURLToPath(new URL('./s3-server.child.mjs', import.meta.url))

/**
 * A real S3-compatible HTTP server (s3rver) on a free local port, with the given buckets created empty. It runs in a
 * process of its own with OpenSSL's legacy provider, which its continuation tokens (paged listings) need.
 */
export async function startS3Server(opts: { buckets: string[] }): Promise<S3TestServer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'quire-s3rver-'))
  const child = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, directory, JSON.stringify(opts.buckets)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => reject(new Error(`s3rver exited before listening (${code ?? signal})`)))
    createInterface({ input: child.stdout! }).once('line', (line) =>
      resolve((JSON.parse(line) as { port: number }).port),
    )
  })
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    // s3rver accepts these fixed credentials (and checks the SigV4 signature made with them).
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
