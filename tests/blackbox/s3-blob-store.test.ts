// Blob storage in S3 (QUIRE_BLOB_STORE=s3): the apps run as separate processes against a real S3-compatible server
// (s3rver) reached through the AWS SDK. Uploads land in the bucket, the parse stage reads them back, retention
// deletes them, the blob sweep deletes objects of jobs that never committed, and a bad configuration stops a process
// at start.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { startS3Server, type S3TestServer } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { startStack, type Stack } from './stack.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BUCKET = 'quire-blobs'
const PREFIX = 'bb'

let s3: S3TestServer
let client: S3Client
let stack: Stack

beforeAll(async () => {
  s3 = await startS3Server({ buckets: [BUCKET] })
  client = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials })
  stack = await startStack({
    env: {
      QUIRE_BLOB_STORE: 's3',
      QUIRE_BLOB_S3: JSON.stringify({
        bucket: BUCKET,
        region: s3.region,
        endpoint: s3.endpoint,
        force_path_style: true,
        access_key_id: s3.credentials.accessKeyId,
        secret_access_key: s3.credentials.secretAccessKey,
        prefix: PREFIX,
      }),
      QUIRE_JOB_RETENTION_MS: '15000',
      QUIRE_SWEEP_INTERVAL_MS: '250',
      QUIRE_BLOB_SWEEP_INTERVAL_MS: '500',
      QUIRE_BLOB_SWEEP_MIN_AGE_MS: '2000',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  client?.destroy()
  await s3?.close()
})

const objectsUnder = async (prefix: string) =>
  ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => ({
    key: o.Key,
    size: o.Size,
  }))

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true })
    return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
  } catch {
    return []
  }
}

describe('QUIRE_BLOB_STORE=s3', () => {
  it('an upload is stored in the bucket, parsed from it, and deleted from it by retention', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B')
    const pdf = await invoicePdf()
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: pdf }], { schema_id: 'invoice' }),
    })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    const jobId = r.body[0].job_id as string

    // The object is in the bucket, under the prefix, with the uploaded bytes' length.
    const jobPrefix = `${PREFIX}/${workspaceId}/${jobId.slice(-2)}/${jobId}-`
    expect(await objectsUnder(jobPrefix)).toEqual([{ key: `${jobPrefix}0`, size: pdf.length }])

    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=result`, { key }),
      (x) => ['completed', 'failed', 'completed_with_errors'].includes(x.body.status),
      60_000,
    )
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    const doc = done.body.result.documents[0]
    expect(doc.schema_id).toBe('invoice')
    expect(doc.data.invoice_number.value).toBe('INV-2026-0042')

    // Nothing went to the filesystem store; the directory holds at most the parse stage's cached copy.
    const local = await filesUnder(stack.env.QUIRE_BLOB_DIR!)
    expect(
      local.every((f) => f.startsWith(`s3-cache${path.sep}`)),
      local.join(', '),
    ).toBe(true)

    // Retention (15 s here): the job answers 410 and its object is gone from the bucket, its cached copy too.
    const expired = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (x) => x.status === 410,
      45_000,
    )
    expect(expired.body.error).toMatchObject({ code: 'job_expired' })
    await pollUntil(
      () => objectsUnder(jobPrefix),
      (objects) => objects.length === 0,
      10_000,
    )
    // The cached copy goes right after the object (one delete, then the other): wait for it the same way.
    const localLeft = await pollUntil(
      () => filesUnder(stack.env.QUIRE_BLOB_DIR!),
      (files) => files.length === 0,
      10_000,
    )
    expect(localLeft).toEqual([])
  }, 120_000)

  it('objects of jobs that never committed are deleted by the blob sweep; other objects stay', async () => {
    const jobId = `job_${randomBytes(12).toString('hex')}`
    const orphan = `${PREFIX}/ws_gone/${jobId.slice(-2)}/${jobId}-0`
    const keep = [`${PREFIX}/imports/readme.txt`, `elsewhere/ws_gone/${jobId.slice(-2)}/${jobId}-0`]
    for (const Key of [orphan, ...keep])
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: '%PDF-1.4 never committed' }))
    await pollUntil(
      () => objectsUnder(orphan),
      (objects) => objects.length === 0,
      30_000,
    )
    for (const Key of keep) expect(await objectsUnder(Key)).toHaveLength(1)
  }, 60_000)

  it('a bad blob store configuration stops the api and the stage worker at start, naming the problem', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '' }, 'QUIRE_BLOB_STORE=s3 needs QUIRE_BLOB_S3'],
      [{ QUIRE_BLOB_STORE: 's3', QUIRE_BLOB_S3: '{"bucket": "b", "acces_key_id": "x"}' }, 'QUIRE_BLOB_S3 is invalid'],
      [{ QUIRE_BLOB_STORE: 'gcs' }, 'QUIRE_BLOB_STORE must be "fs" or "s3"'],
    ]
    for (const app of ['api', 'stage-worker']) {
      for (const [env, message] of cases) {
        const { code, output } = await runUntilExit(app, env)
        expect(code, `${app} ${JSON.stringify(env)}`).not.toBe(0)
        expect(output, `${app} ${JSON.stringify(env)}`).toContain(message)
      }
    }
  }, 120_000)
})

/** Starts one app with the stack's environment plus `env` and waits for it to exit (it must, within 30 s). */
function runUntilExit(app: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'apps', app, 'src', 'main.ts')],
      {
        cwd: ROOT,
        // Port 0: should the configuration be accepted after all, the api does not collide with the running one.
        env: { ...stack.env, QUIRE_API_PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    child.stdout.on('data', (d) => (output += String(d)))
    child.stderr.on('data', (d) => (output += String(d)))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${app} did not exit with ${JSON.stringify(env)}:\n${output}`))
    }, 30_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}
