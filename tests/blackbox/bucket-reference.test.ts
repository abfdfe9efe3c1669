// Form A JSON submission referencing objects in operator-connected buckets (QUIRE_BUCKETS): a local directory and a
// real S3-compatible server (s3rver) reached through the AWS SDK. The apps run as separate processes.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { startS3Server, type S3TestServer } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { contractFetch } from './contract.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
let s3: S3TestServer
let localDir: string

beforeAll(async () => {
  localDir = mkdtempSync(path.join(os.tmpdir(), 'quire-bb-bucket-'))
  mkdirSync(path.join(localDir, 'invoices'), { recursive: true })
  writeFileSync(path.join(localDir, 'invoices', 'inv-42.pdf'), await invoicePdf())
  // Sparse: 101 MB by size, nothing on disk; the API must refuse it by stat before copying.
  writeFileSync(path.join(localDir, 'huge.pdf'), '')
  truncateSync(path.join(localDir, 'huge.pdf'), 101 * 1024 * 1024)
  // A file beside the bucket directory, for the ../ escape.
  writeFileSync(path.join(localDir, '..', `${path.basename(localDir)}-outside.pdf`), await invoicePdf())

  s3 = await startS3Server({ buckets: ['quire-incoming'] })
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
  })
  await client.send(
    new PutObjectCommand({
      Bucket: 'quire-incoming',
      Key: 'scans/2026/inv-42.pdf',
      Body: await invoicePdf(),
      ContentType: 'application/pdf',
    }),
  )
  client.destroy()

  const s3Bucket = {
    type: 's3',
    bucket: 'quire-incoming',
    region: s3.region,
    endpoint: s3.endpoint,
    force_path_style: true,
    access_key_id: s3.credentials.accessKeyId,
    secret_access_key: s3.credentials.secretAccessKey,
  }
  stack = await startStack({
    env: {
      QUIRE_BUCKETS: JSON.stringify({
        local: { type: 'local', dir: localDir },
        s3in: s3Bucket,
        down: { ...s3Bucket, endpoint: 'http://127.0.0.1:1' },
      }),
    },
  })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await s3?.close()
  rmSync(path.join(localDir, '..', `${path.basename(localDir)}-outside.pdf`), { force: true })
  rmSync(localDir, { recursive: true, force: true })
})

async function publishedPipeline(key: string): Promise<string> {
  const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
    key,
    json: {
      name: 'invoices',
      definition: { document_types: [{ name: 'invoice', keywords: ['invoice'], schema_id: 'invoice' }] },
    },
  })
  expect(p.status).toBe(201)
  const pub = await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
  expect(pub.status).toBe(200)
  return p.body.id as string
}

async function expectNoJobs(key: string, credits: number) {
  const list = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
  expect(list.body.data).toHaveLength(0)
  const bal = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
  expect(bal.body).toMatchObject({ available: credits, reserved: 0, spent: 0 })
  // No temporary copy of a fetched object is left behind.
  const uploads = stack.env.QUIRE_UPLOAD_DIR!
  expect(readdirSync(uploads).filter((f) => f.startsWith('bucket-'))).toEqual([])
}

describe('Form A: POST /v1/jobs with application/json referencing a bucket object', () => {
  it('local bucket: 202 with the Form A object, then completed with extracted data and metadata', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const pipelineId = await publishedPipeline(key)
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: {
        pipeline_id: pipelineId,
        files: [{ bucket: 'local', key: 'invoices/inv-42.pdf' }],
        source_tag: 'bb-bucket',
        metadata: { customer: 'northwind' },
      },
    })
    // spec: Form A submit → 202 with one object (id, status, stage_now, pipeline, documents count, source_tag, created_at)
    expect(submit.status).toBe(202)
    expect(submit.body).toMatchObject({
      id: expect.any(String),
      status: 'processing',
      stage_now: 'init',
      pipeline: { id: pipelineId, version: 'v1' },
      documents: 1,
      source_tag: 'bb-bucket',
    })
    expect(Date.parse(submit.body.created_at)).not.toBeNaN()

    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${submit.body.id}`, { key }),
      (r) => r.body.status !== 'processing',
    )
    expect(done.body.status).toBe('completed')
    const doc = await call(stack.baseUrl, 'GET', `/v1/documents/${done.body.documents[0].id}`, { key })
    expect(doc.body.data.invoice_number).toMatchObject({ value: 'INV-2026-0042' })
    expect(doc.body.metadata).toMatchObject({ customer: 'northwind' })
    const bal = await call(stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(bal.body).toMatchObject({ available: 99, reserved: 0, spent: 1 })
  }, 120_000)

  it('several references form one job (like repeated `file` parts)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const pipelineId = await publishedPipeline(key)
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: {
        pipeline_id: pipelineId,
        files: [
          { bucket: 'local', key: 'invoices/inv-42.pdf' },
          { bucket: 's3in', key: 'scans/2026/inv-42.pdf' },
        ],
        run_kind: 'test',
      },
    })
    expect(submit.status).toBe(202)
    const list = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
    expect(list.body.data).toHaveLength(1)
  })

  it('a missing object → 404 OBJECT_NOT_FOUND (flat envelope), and no job or credit hold', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 50 })
    const pipelineId = await publishedPipeline(key)
    for (const file of [
      { bucket: 'local', key: 'invoices/missing.pdf' },
      { bucket: 's3in', key: 'scans/2026/missing.pdf' },
    ]) {
      // The first reference exists: a later missing one still creates nothing.
      const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        json: { pipeline_id: pipelineId, files: [{ bucket: 'local', key: 'invoices/inv-42.pdf' }, file] },
      })
      expect(r.status).toBe(404)
      expect(r.body).toMatchObject({
        error: 'OBJECT_NOT_FOUND',
        message: expect.stringContaining(file.key),
        timestamp: expect.any(String),
      })
    }
    await expectNoJobs(key, 50)
  })

  it('an unknown bucket → 400 UNKNOWN_BUCKET; a key leaving a local bucket → 400 INVALID_PARAMETER', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 50 })
    const pipelineId = await publishedPipeline(key)
    const unknown = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 'elsewhere', key: 'invoices/inv-42.pdf' }] },
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ error: 'UNKNOWN_BUCKET', timestamp: expect.any(String) })

    const escape = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 'local', key: `../${path.basename(localDir)}-outside.pdf` }] },
    })
    expect(escape.status).toBe(400)
    expect(escape.body.error).toBe('INVALID_PARAMETER')
    await expectNoJobs(key, 50)
  })

  it('too large → 413 FILE_TOO_LARGE; an unreachable bucket → 502 BUCKET_UNAVAILABLE', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 50 })
    const pipelineId = await publishedPipeline(key)
    const big = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 'local', key: 'huge.pdf' }] },
    })
    expect(big.status).toBe(413)
    expect(big.body.error).toBe('FILE_TOO_LARGE')
    const down = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 'down', key: 'a.pdf' }] },
    })
    expect(down.status).toBe(502)
    expect(down.body).toMatchObject({ error: 'BUCKET_UNAVAILABLE', timestamp: expect.any(String) })
    await expectNoJobs(key, 50)
  })

  it('validates the body: missing files, bad metadata, unknown fields, invalid JSON', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A')
    const pipelineId = await publishedPipeline(key)
    const noFiles = await call(stack.baseUrl, 'POST', '/v1/jobs', { key, json: { pipeline_id: pipelineId } })
    expect(noFiles.status).toBe(400)
    expect(noFiles.body.error).toBe('INVALID_PARAMETER')
    const meta = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 'local', key: 'invoices/inv-42.pdf' }], metadata: { n: 1 } },
    })
    expect(meta.status).toBe(400)
    expect(meta.body.error).toBe('INVALID_METADATA')
    const typo = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, file: [{ bucket: 'local', key: 'invoices/inv-42.pdf' }] },
    })
    expect(typo.status).toBe(400)
    expect(typo.body.error).toBe('INVALID_PARAMETER')
    const res = await contractFetch(stack.baseUrl, '/v1/jobs', {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: '{"pipeline_id":',
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('MALFORMED_REQUEST')
  })

  it('multipart Form A still works beside the JSON form', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A')
    const pipelineId = await publishedPipeline(key)
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: await invoicePdf() }], { pipeline_id: pipelineId }),
    })
    expect(r.status).toBe(202)
  })
})

describe('S3-compatible bucket through the AWS SDK', () => {
  it('an object put with the SDK is referenced, fetched and processed to completed', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const pipelineId = await publishedPipeline(key)
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { pipeline_id: pipelineId, files: [{ bucket: 's3in', key: 'scans/2026/inv-42.pdf' }], version: 'v1' },
    })
    expect(submit.status).toBe(202)
    expect(submit.body).toMatchObject({
      status: 'processing',
      pipeline: { id: pipelineId, version: 'v1' },
      documents: 1,
    })
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${submit.body.id}`, { key }),
      (r) => r.body.status !== 'processing',
    )
    expect(done.body.status).toBe('completed')
    const doc = await call(stack.baseUrl, 'GET', `/v1/documents/${done.body.documents[0].id}`, { key })
    expect(doc.body.data.amount).toMatchObject({ value: 1200 })
  }, 120_000)
})

describe('Form B is multipart only', () => {
  it('a JSON body → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      json: { files: [{ bucket: 'local', key: 'invoices/inv-42.pdf' }] },
    })
    expect(r.status).toBe(415)
    expect(r.body).toMatchObject({ error: 'UNSUPPORTED_MEDIA_TYPE', timestamp: expect.any(String) })
  })
})
