// Bad input, black box: the real API as a separate process, spoken to with fetch and with raw sockets (so that each
// malformed request is exactly the bytes meant). Every case answers a flat 4xx with a stable code — never a 5xx —
// leaves nothing in QUIRE_UPLOAD_DIR, and creates no job. Every complete answer, raw or not, is checked against the
// served OpenAPI document (tests/blackbox/contract.ts), as the black-box client checks its own.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { assertContract, contractFetch } from './contract.ts'
import { loopbackBufferBytes, multipartBytes, rawRequest, type RawResponse } from './raw-http.ts'
import { startStack, type Stack } from './stack.ts'

const MB = 1024 * 1024
const LIMIT = 100 * MB // spec: "Upload exceeds 100 MB" → 413 FILE_TOO_LARGE, per file
// What a client may have written past the point where the API decided, when the API closes early: what the kernel
// buffers on both sides hold without the API reading (loopbackBufferBytes), plus the 16 MB the API discards while it
// lingers after the response (closeAfterResponse), plus one chunk in flight. Far below the 300 MB of the tests' uploads,
// so reading the whole body still fails them; and independent of how fast this (loaded) machine streams.
const EARLY_CLOSE_SLACK = loopbackBufferBytes() + 16 * MB + MB
const B = 'quire-bad-input-boundary'

let stack: Stack
let port: number
let uploadDir: string
let keyA: string
let keyB: string
let keyNames: string

beforeAll(async () => {
  // Info level: the client-abort test below reads the level its line is logged at.
  stack = await startStack({ env: { QUIRE_LOG_LEVEL: 'info' } })
  port = Number(new URL(stack.baseUrl).port)
  uploadDir = stack.env.QUIRE_UPLOAD_DIR!
  ;({ key: keyA } = await newWorkspace(stack.baseUrl, 'A', { credits: 1000 }))
  ;({ key: keyB } = await newWorkspace(stack.baseUrl, 'B', { credits: 1000 }))
  ;({ key: keyNames } = await newWorkspace(stack.baseUrl, 'B', { credits: 1000 }))
}, 180_000)

afterAll(async () => {
  await stack?.stop()
})

// ---- helpers -------------------------------------------------------------------------------------------------------

type Flat = { status: number; body: any }
const asFlat = (r: RawResponse): Flat => ({ status: r.status, body: r.json })

/** Status, the flat envelope {error, message, timestamp}, nothing left in QUIRE_UPLOAD_DIR, no job in the workspace. */
async function expectRejected(res: Flat, status: number, code: string, key: string = keyB) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toMatchObject({ error: code, message: expect.any(String), timestamp: expect.any(String) })
  expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp)
  await expectUploadDirEmpty()
  await expectNoJobs(key)
}

async function expectUploadDirEmpty() {
  const deadline = Date.now() + 3000
  // The API makes the directory with its first upload: none yet (a test run alone) is as empty as it gets.
  const list = () => (existsSync(uploadDir) ? readdirSync(uploadDir) : [])
  let left = list()
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    left = list()
  }
  expect(left).toEqual([])
}

async function expectNoJobs(key: string) {
  const list = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
  expect(list.status).toBe(200)
  expect(list.body.data).toEqual([])
}

/** A multipart POST /v1/jobs over a raw socket, with a Content-Length matching `body` unless told otherwise. */
function rawSubmit(
  key: string,
  body: Buffer,
  opts: { contentType?: string; contentLength?: number; path?: string; closeAfterBody?: 'end' | 'destroy' } = {},
) {
  return rawRequest({
    port,
    head: [
      `POST ${opts.path ?? '/v1/jobs'} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      `X-API-Key: ${key}`,
      `Content-Type: ${opts.contentType ?? `multipart/form-data; boundary=${B}`}`,
      `Content-Length: ${opts.contentLength ?? body.length}`,
    ],
    body,
    closeAfterBody: opts.closeAfterBody,
    contract: true,
  })
}

const filePart = (field: string, name: string, content: string | Uint8Array, type = 'application/pdf') => ({
  headers: [`Content-Disposition: form-data; name="${field}"; filename="${name}"`, `Content-Type: ${type}`],
  content: Buffer.from(content),
})
type Part = Parameters<typeof multipartBytes>[1][number]
const textPart = (field: string, value: string) => ({
  headers: [`Content-Disposition: form-data; name="${field}"`],
  content: value,
})

const memory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }
}

const fileHead = (name = 'huge.pdf') =>
  Buffer.from(
    `--${B}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: application/pdf\r\n\r\n`,
  )

// ---- 413 -----------------------------------------------------------------------------------------------------------

describe('413 FILE_TOO_LARGE, per file, early', () => {
  it('a streamed upload of a file over 100 MB is answered 413 as soon as the part passes 100 MB; memory stays low; nothing left', async () => {
    const pid = stack.pid('api')!
    const before = memory(pid)
    const TOTAL = 300 * MB // the client is willing to send 300 MB; the server must stop it at about 100
    const chunk = new Uint8Array(MB).fill(0x25)
    let pulled = 0
    let headSent = false
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!headSent) {
          headSent = true
          controller.enqueue(fileHead())
        } else if (pulled < TOTAL) {
          pulled += chunk.length
          controller.enqueue(chunk)
        } else {
          controller.enqueue(Buffer.from(`\r\n--${B}--\r\n`))
          controller.close()
        }
      },
    })
    const started = Date.now()
    const res = await fetch(`${stack.baseUrl}/v1/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': keyB, 'Content-Type': `multipart/form-data; boundary=${B}` },
      body,
      duplex: 'half',
    } as RequestInit)
    const pulledAtResponse = pulled
    const ms = Date.now() - started
    const json = await res.json()
    await assertContract(
      stack.baseUrl,
      { method: 'POST', path: '/v1/jobs', key: keyB },
      { status: res.status, body: json, contentType: res.headers.get('content-type') },
    )
    const after = memory(pid)
    console.log(
      `[bad-input] fetch 413 after ${(pulledAtResponse / MB).toFixed(1)} MB pulled of ${TOTAL / MB} MB, ${ms} ms; ` +
        `api RSS ${before.rssMb.toFixed(0)} → ${after.rssMb.toFixed(0)} MB, ` +
        `peak ${before.peakMb.toFixed(0)} → ${after.peakMb.toFixed(0)} MB; Connection: ${res.headers.get('connection')}`,
    )
    expect(res.headers.get('connection')).toBe('close')
    await expectRejected({ status: res.status, body: json }, 413, 'FILE_TOO_LARGE')
    // The answer came while the client was still sending, at about 100 MB (plus what sits in socket buffers).
    expect(pulledAtResponse).toBeGreaterThanOrEqual(LIMIT - 8 * MB)
    expect(pulledAtResponse).toBeLessThan(LIMIT + 32 * MB)
    // Nothing was buffered whole: the peak resident size grew far less than the 100 MB that went through.
    expect(after.peakMb - before.peakMb).toBeLessThan(64)
    // The client stopped sending after the answer (undici ends the request once the response is complete).
    await new Promise((r) => setTimeout(r, 500))
    expect(pulled).toBeLessThan(LIMIT + 40 * MB)
    const health = await contractFetch(stack.baseUrl, '/healthz')
    expect(health.status).toBe(200)
  })

  it('a raw client streaming a declared 300 MB body gets the 413 before it has written much more than 100 MB', async () => {
    const head = fileHead()
    const TOTAL = 300 * MB
    const chunk = Buffer.alloc(256 * 1024, 0x25)
    let produced = 0
    const res = await rawRequest({
      port,
      head: [
        'POST /v1/jobs HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `X-API-Key: ${keyB}`,
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + TOTAL}`,
      ],
      body: head,
      stream: () => (produced >= TOTAL ? null : ((produced += chunk.length), chunk)),
      timeoutMs: 60_000,
      contract: true,
    })
    console.log(
      `[bad-input] raw 413 after ${(res.bodyBytesWritten / MB).toFixed(1)} MB written of ${TOTAL / MB} MB; connection ${res.ended}`,
    )
    expect(res.headers.connection).toBe('close')
    await expectRejected(asFlat(res), 413, 'FILE_TOO_LARGE')
    expect(res.bodyBytesWritten).toBeLessThan(LIMIT + EARLY_CLOSE_SLACK)
  })

  it('any error decided before the body is read closes the connection early too: a 300 MB upload with a wrong key → 401', async () => {
    const head = fileHead()
    const TOTAL = 300 * MB
    const chunk = Buffer.alloc(256 * 1024, 0x25)
    let produced = 0
    const res = await rawRequest({
      port,
      head: [
        'POST /v1/jobs HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'X-API-Key: not-a-key',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + TOTAL}`,
      ],
      body: head,
      stream: () => (produced >= TOTAL ? null : ((produced += chunk.length), chunk)),
      timeoutMs: 60_000,
      contract: true,
    })
    expect(res.status).toBe(401)
    expect(res.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } })
    expect(res.headers.connection).toBe('close')
    console.log(`[bad-input] raw 401 after ${(res.bodyBytesWritten / MB).toFixed(1)} MB written of ${TOTAL / MB} MB`)
    expect(res.bodyBytesWritten).toBeLessThan(EARLY_CLOSE_SLACK)
    await expectUploadDirEmpty()
  })

  it("Node's fetch sending a whole 60 or 101 MB body gets the early answer (401 wrong key, 413 too large), not EPIPE", async () => {
    // undici keeps writing a body it holds whole after the answer has arrived; the API reads such a body (declared,
    // up to 128 MB) to its end before closing, so the answer reaches the client (README, "Bad input").
    for (const [size, key, status] of [
      [60 * MB, 'not-a-key', 401],
      [LIMIT + MB, 'not-a-key', 401],
      [LIMIT + MB, keyB, 413],
    ] as const) {
      const form = new FormData()
      form.append('files', new Blob([new Uint8Array(size).fill(0x25)], { type: 'application/pdf' }), 'big.pdf')
      const res = await fetch(`${stack.baseUrl}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': key }, body: form })
      expect(res.status).toBe(status)
      expect(res.headers.get('connection')).toBe('close')
      const json = await res.json()
      if (status === 401) expect(json).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } })
      else expect(json).toMatchObject({ error: 'FILE_TOO_LARGE' })
    }
    await expectUploadDirEmpty()
  })

  it('a client that sends its whole declared 40 MB body before reading, slowly (4 s), still gets the 401 and no reset', async () => {
    // undici with a body it holds whole behaves so; past the 16 MB / 2 s bound for undeclared bodies, the API reads
    // a declared body up to 128 MB to its end before closing (README, "Bad input").
    const head = fileHead()
    const TOTAL = 40 * MB
    // allowHalfOpen: keep writing after the server's FIN, as a client busy sending does before it reads.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    let received = ''
    let writeError: string | null = null
    socket.on('data', (d) => {
      received += d.toString('latin1')
    })
    socket.on('error', (err) => {
      writeError ??= (err as NodeJS.ErrnoException).code ?? err.message
    })
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.write(
      [
        'POST /v1/jobs HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'X-API-Key: not-a-key',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + TOTAL}`,
        '',
        '',
      ].join('\r\n'),
    )
    socket.write(head)
    const chunk = Buffer.alloc(MB, 0x25)
    for (let sent = 0; sent < TOTAL && !writeError; sent += MB) {
      await new Promise<void>((resolve) =>
        socket.write(chunk, (err) => {
          if (err) writeError ??= (err as NodeJS.ErrnoException).code ?? err.message
          resolve()
        }),
      )
      await new Promise((r) => setTimeout(r, 100))
    }
    // Done sending, the client reads its answer and closes, as undici does after a `Connection: close` response.
    socket.end()
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))])
    socket.destroy()
    expect(writeError).toBeNull()
    expect(received).toMatch(/^HTTP\/1\.1 401 /)
    expect(received.toLowerCase()).toContain('connection: close')
    await expectUploadDirEmpty()
  })

  it('the limit is per file, not per request: two files of 60 MB pass the size check (and fail on type: zeros are no PDF)', async () => {
    const zeros = new Uint8Array(60 * MB)
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyB,
      form: fileForm('files', [
        { name: 'a.pdf', bytes: zeros },
        { name: 'b.pdf', bytes: zeros },
      ]),
    })
    await expectRejected(res, 422, 'UNSUPPORTED_FILE_TYPE')
  })

  // Spec, Form B responses, rule 4: "Files are processed in order. If a later file is rejected, jobs already created
  // for earlier files stand and the response is the error."
  it('Form B rule 4: a later file over 100 MB is 413, the job of the file before it stands and the 413 names it', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 1000 })
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [
        { name: 'first.pdf', bytes: await invoicePdf() },
        { name: 'second.pdf', bytes: new Uint8Array(LIMIT + MB) },
      ]),
    })
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ error: 'FILE_TOO_LARGE', details: { file_name: 'second.pdf' } })
    const jobs = await call(stack.baseUrl, 'GET', '/v1/jobs', { key })
    expect(jobs.body.data).toHaveLength(1)
    expect(res.body.details.created_job_ids).toEqual([jobs.body.data[0].job_id])
    const job = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobs.body.data[0].job_id}`, { key })
    expect(job.body.input).toMatchObject({ file_name: 'first.pdf' })
    await expectUploadDirEmpty()
  })

  /**
   * Form B over a raw socket without holding the big file in memory: `before` parts, then a file of `hugeBytes`
   * named huge.pdf streamed in 1 MB chunks, then `after` parts and the closing boundary.
   */
  async function submitAroundHugeFile(key: string, before: Part[], after: Part[], hugeBytes = LIMIT + MB) {
    const head = Buffer.concat([multipartBytes(B, before, false), fileHead()])
    const tail = Buffer.concat([Buffer.from('\r\n'), multipartBytes(B, after)])
    const chunk = Buffer.alloc(MB, 0x25)
    let produced = 0
    let tailSent = false
    return rawRequest({
      port,
      head: [
        'POST /v1/jobs HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `X-API-Key: ${key}`,
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + hugeBytes + tail.length}`,
      ],
      body: head,
      stream: () => {
        if (produced < hugeBytes) {
          const n = Math.min(chunk.length, hugeBytes - produced)
          produced += n
          return chunk.subarray(0, n)
        }
        if (tailSent) return null
        tailSent = true
        return tail
      },
      timeoutMs: 90_000,
      contract: true,
    })
  }

  it('Form B rule 4 ("jobs already created for earlier files stand"): text fields sent after the refused file apply to the earlier jobs; the 413 lists them; a later file never becomes a job; the connection stays open; nothing left', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 1000 })
    const created = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'after-the-file', definition: {} },
    })
    const pipelineId = created.body.id as string
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/1/publish`, { key })
    const pdf = await invoicePdf()
    const res = await submitAroundHugeFile(
      key,
      [filePart('files', 'first.pdf', pdf), filePart('files', 'second.pdf', pdf)],
      [
        textPart('pipeline_id', pipelineId),
        textPart('client_reference_id', 'ref-after'),
        textPart('environment', 'test'),
        filePart('files', 'later.pdf', pdf),
      ],
    )
    expect(res.status, res.body).toBe(413)
    expect(res.json).toMatchObject({ error: 'FILE_TOO_LARGE', details: { file_name: 'huge.pdf' } })
    // The whole body was read, so the connection is kept (no early close).
    expect(res.headers.connection).not.toBe('close')
    const ids: string[] = res.json.details.created_job_ids
    expect(ids).toHaveLength(2)
    const jobs = await Promise.all(ids.map((id) => call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key })))
    expect(jobs.map((j) => j.body.input.file_name)).toEqual(['first.pdf', 'second.pdf'])
    for (const j of jobs) {
      expect(j.body).toMatchObject({ pipeline_id: pipelineId, client_reference_id: 'ref-after', environment: 'test' })
    }
    // The earlier jobs run that pipeline to the end.
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${ids[0]}`, { key }),
      (r) => ['completed', 'completed_with_errors', 'failed'].includes(r.body.status),
      120_000,
    )
    expect(done.body).toMatchObject({ status: 'completed', pipeline_id: pipelineId })
    // Neither the refused file nor the one after it became a job.
    for (const environment of ['test', 'production']) {
      const list = await call(stack.baseUrl, 'GET', `/v1/jobs?environment=${environment}`, { key })
      expect(list.body.data.map((j: { job_id: string }) => j.job_id).sort()).toEqual(
        environment === 'test' ? [...ids].sort() : [],
      )
    }
    await expectUploadDirEmpty()
    expect((await contractFetch(stack.baseUrl, '/healthz')).status).toBe(200)
    expect(stack.logs.api.join('')).not.toContain('unexpected error')
  })

  it('Form B rule 4: fields after the refused file obey the usual rules — given twice (before and after it) 400 INVALID_PARAMETER, an unknown one 400 UNKNOWN_PARAMETER — and then no job is created', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 1000 })
    const pdf = await invoicePdf()
    const twice = await submitAroundHugeFile(
      key,
      [textPart('client_reference_id', 'one'), filePart('files', 'first.pdf', pdf)],
      [textPart('client_reference_id', 'two')],
    )
    await expectRejected(asFlat(twice), 400, 'INVALID_PARAMETER', key)
    expect(twice.json.message).toContain('client_reference_id')
    const unknown = await submitAroundHugeFile(
      key,
      [filePart('files', 'first.pdf', pdf)],
      [textPart('pipline_id', 'x')],
    )
    await expectRejected(asFlat(unknown), 400, 'UNKNOWN_PARAMETER', key)
    expect(unknown.json.details).toEqual({ parameters: ['pipline_id'] })
  })
})

// ---- malformed and truncated multipart, over raw sockets -------------------------------------------------------------

describe('malformed or truncated multipart → 400 MALFORMED_REQUEST', () => {
  it('a client that closes the connection mid-body: nothing left, no job, no server error, the API keeps serving', async () => {
    const full = multipartBytes(B, [filePart('files', 'a.pdf', new Uint8Array(2 * MB).fill(1))])
    const res = await rawSubmit(keyB, full.subarray(0, MB), { contentLength: full.length, closeAfterBody: 'destroy' })
    expect(res.status).toBe(0) // it left before any answer
    await expectUploadDirEmpty()
    await expectNoJobs(keyB)
    expect(stack.logs.api.join('')).not.toContain('unexpected error')
    expect((await contractFetch(stack.baseUrl, '/healthz')).status).toBe(200)
  })

  it('a client that half-closes mid-body (FIN, still reading) gets a 400 or a closed connection, never a 5xx', async () => {
    const full = multipartBytes(B, [filePart('files', 'a.pdf', new Uint8Array(2 * MB).fill(1))])
    const res = await rawSubmit(keyB, full.subarray(0, MB), { contentLength: full.length, closeAfterBody: 'end' })
    expect([0, 400]).toContain(res.status)
    await expectUploadDirEmpty()
    await expectNoJobs(keyB)
  })

  it('no closing boundary (the body ends inside a file part)', async () => {
    const body = multipartBytes(
      B,
      [textPart('mode', 'async'), filePart('files', 'a.pdf', new Uint8Array(300_000).fill(2))],
      false,
    )
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'MALFORMED_REQUEST')
  })

  it('a boundary that never appears', async () => {
    const body = Buffer.alloc(200_000, 0x41)
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'MALFORMED_REQUEST')
  })

  it('a header-less part', async () => {
    const body = Buffer.from(`--${B}\r\n\r\n%PDF-1.4 no headers\r\n--${B}--\r\n`)
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'MALFORMED_REQUEST')
  })

  it('a multipart content type without a boundary', async () => {
    const body = multipartBytes(B, [filePart('files', 'a.pdf', '%PDF')])
    await expectRejected(
      asFlat(await rawSubmit(keyB, body, { contentType: 'multipart/form-data' })),
      400,
      'MALFORMED_REQUEST',
    )
  })

  // Reliability item 1: `Content-Transfer-Encoding: 7bit` on a text part (older HTTP clients, mail-style encoders) threw
  // inside formidable, outside any handler, and ended the API process.
  it.each(['7bit', '8bit', 'binary', 'base64'])(
    'a text part with Content-Transfer-Encoding: %s is read as text; the API process keeps running (same pid)',
    async (encoding) => {
      const pid = stack.pid('api')
      const value = encoding === 'base64' ? Buffer.from('demo').toString('base64') : 'demo'
      const body = multipartBytes(B, [
        {
          headers: [
            'Content-Disposition: form-data; name="client_reference_id"',
            `Content-Transfer-Encoding: ${encoding}`,
          ],
          content: value,
        },
        filePart('files', 'a.pdf', await invoicePdf()),
      ])
      const res = asFlat(await rawSubmit(keyNames, body))
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(res.body[0]).toMatchObject({ client_reference_id: 'demo', status: 'queued' })
      expect(stack.pid('api')).toBe(pid)
      expect((await contractFetch(stack.baseUrl, '/healthz')).status).toBe(200)
    },
  )

  it('a text part with quoted-printable (unsupported) → 400 MALFORMED_REQUEST; the API keeps running', async () => {
    const pid = stack.pid('api')
    const body = multipartBytes(B, [
      {
        headers: [
          'Content-Disposition: form-data; name="client_reference_id"',
          'Content-Transfer-Encoding: quoted-printable',
        ],
        content: 'a=3Db',
      },
      filePart('files', 'a.pdf', '%PDF'),
    ])
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'MALFORMED_REQUEST')
    expect(stack.pid('api')).toBe(pid)
  })

  it('an unsupported Content-Transfer-Encoding on a part (formidable would say 501)', async () => {
    const body = multipartBytes(B, [
      {
        headers: [
          'Content-Disposition: form-data; name="files"; filename="a.pdf"',
          'Content-Transfer-Encoding: x-gzip',
        ],
        content: 'x',
      },
    ])
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'MALFORMED_REQUEST')
  })
})

// ---- content type, counts, parameters -------------------------------------------------------------------------------

describe('wrong content type → 415 UNSUPPORTED_MEDIA_TYPE', () => {
  it.each([
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'files=a.pdf'],
    ['application/json', '{"files":[]}'], // Form B takes only multipart (Form A also takes JSON bucket references)
    ['application/octet-stream', '%PDF-1.4'],
  ])('%s', async (type, text) => {
    const res = await contractFetch(stack.baseUrl, '/v1/jobs', {
      method: 'POST',
      headers: { 'X-API-Key': keyB, 'Content-Type': type },
      body: text,
    })
    await expectRejected({ status: res.status, body: await res.json() }, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('no content type at all', async () => {
    const res = await rawSubmit(keyB, Buffer.from('%PDF-1.4'), { contentType: '' })
    await expectRejected(asFlat(res), 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  // spec, POST /v1/webhooks: "JSON body". A body of another type is refused as such, not read as an empty object.
  it.each([
    ['text/plain', 'A'],
    ['application/x-www-form-urlencoded', 'B'],
  ] as const)('a JSON endpoint given %s (Form %s) → 415', async (type, form) => {
    const json = { name: 'typed', url: 'https://8.8.8.8/hook', ...(form === 'A' ? { auth_type: 'NONE' } : {}) }
    const res = await contractFetch(stack.baseUrl, '/v1/webhooks', {
      method: 'POST',
      headers: { 'X-API-Key': form === 'A' ? keyA : keyB, 'Content-Type': type },
      body: JSON.stringify(json),
    })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(415)
    expect(body).toMatchObject({ error: 'UNSUPPORTED_MEDIA_TYPE' })
  })
})

describe('counts', () => {
  it('thousands of fields → 400 TOO_MANY_FIELDS', async () => {
    const parts = Array.from({ length: 5000 }, (_, i) => textPart('client_reference_id', `r${i}`))
    const body = multipartBytes(B, [...parts, filePart('files', 'a.pdf', await invoicePdf())])
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'TOO_MANY_FIELDS')
  })

  it('more files than allowed (QUIRE_MAX_FILES_PER_REQUEST, 20) → 400 TOO_MANY_FILES', async () => {
    const pdf = await invoicePdf()
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyB,
      form: fileForm(
        'files',
        Array.from({ length: 21 }, (_, i) => ({ name: `${i}.pdf`, bytes: pdf, type: 'application/pdf' })),
      ),
    })
    await expectRejected(res, 400, 'TOO_MANY_FILES')
    expect(res.body.details).toEqual({ max_files: 20 })
  })
})

describe('unknown parameters → 400 UNKNOWN_PARAMETER, the spec’s MISSING_PART kept', () => {
  it('Form B: a misspelt text field is named, not ignored', async () => {
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyB,
      form: fileForm('files', [{ name: 'a.pdf', bytes: await invoicePdf(), type: 'application/pdf' }], {
        priorty: 'high',
      }),
    })
    await expectRejected(res, 400, 'UNKNOWN_PARAMETER')
    expect(res.body.details).toEqual({ parameters: ['priorty'] })
    expect(res.body.message).toContain('"priorty"')
  })

  it('Form B: an unknown query parameter, and a second file field beside `files`', async () => {
    const form = fileForm('files', [{ name: 'a.pdf', bytes: await invoicePdf(), type: 'application/pdf' }])
    form.append('attachment', new Blob(['x']), 'x.pdf')
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs?mode=async&callback=x', { key: keyB, form })
    await expectRejected(res, 400, 'UNKNOWN_PARAMETER')
    expect(res.body.details).toEqual({ parameters: ['attachment', 'callback'] })
  })

  it('Form B: the file sent as `file` instead of `files` is still 400 MISSING_PART', async () => {
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyB,
      form: fileForm('file', [{ name: 'a.pdf', bytes: await invoicePdf(), type: 'application/pdf' }]),
    })
    await expectRejected(res, 400, 'MISSING_PART')
  })

  it('Form A: an unknown text field is named; `files` instead of `file` is 400 MISSING_PART', async () => {
    const pdf = await invoicePdf()
    const unknown = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyA,
      form: fileForm('file', [{ name: 'a.pdf', bytes: pdf, type: 'application/pdf' }], {
        pipeline_id: 'parse',
        sourcetag: 'x',
      }),
    })
    await expectRejected(unknown, 400, 'UNKNOWN_PARAMETER', keyA)
    expect(unknown.body.details).toEqual({ parameters: ['sourcetag'] })
    const wrongField = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyA,
      form: fileForm('files', [{ name: 'a.pdf', bytes: pdf, type: 'application/pdf' }], { pipeline_id: 'parse' }),
    })
    await expectRejected(wrongField, 400, 'MISSING_PART', keyA)
  })

  it('a field name that is not UTF-8 is an unknown parameter, not an error', async () => {
    const body = Buffer.concat([
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="`),
      Buffer.from([0xff, 0xfe, 0x6d]),
      Buffer.from(`"\r\n\r\nx\r\n`),
      multipartBytes(B, [filePart('files', 'a.pdf', await invoicePdf())]),
    ])
    const res = asFlat(await rawSubmit(keyB, body))
    await expectRejected(res, 400, 'UNKNOWN_PARAMETER')
    expect(res.body.details.parameters).toEqual(['\ufffd\ufffdm'])
  })
})

// ---- file names ------------------------------------------------------------------------------------------------------

describe('file names: sanitised, never a path; not UTF-8 or with a NUL refused', () => {
  const fileNameOf = async (jobId: string) => {
    const job = await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key: keyNames })
    expect(job.status).toBe(200)
    return job.body.input.file_name as string
  }
  const listTree = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = path.join(dir, n)
      return statSync(p).isDirectory() ? listTree(p) : [p]
    })

  it('control and bidi-override characters in a file name → 202 with them removed', async () => {
    const pdf = await invoicePdf()
    const disposition = Buffer.concat([
      Buffer.from('Content-Disposition: form-data; name="files"; filename="inv'),
      Buffer.from([0x01, 0x1b]),
      Buffer.from('\u202Eoice.pdf"\r\nContent-Type: application/pdf\r\n\r\n'),
    ])
    const body = Buffer.concat([
      Buffer.from(`--${B}\r\n`),
      disposition,
      Buffer.from(pdf),
      Buffer.from(`\r\n--${B}--\r\n`),
    ])
    const res = await rawSubmit(keyNames, body)
    expect(res.status, res.body).toBe(202)
    expect(await fileNameOf(res.json[0].job_id)).toBe('invoice.pdf')
    await expectUploadDirEmpty()
  })

  it('a file name that is not UTF-8, or holds a NUL → 400 VALIDATION_ERROR, no job (DESIGN: Robustness)', async () => {
    const pdf = await invoicePdf()
    for (const bad of [Buffer.from([0xff, 0xc3]), Buffer.from([0x00])]) {
      const body = Buffer.concat([
        Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="files"; filename="inv`),
        bad,
        Buffer.from('oice.pdf"\r\nContent-Type: application/pdf\r\n\r\n'),
        Buffer.from(pdf),
        Buffer.from(`\r\n--${B}--\r\n`),
      ])
      await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'VALIDATION_ERROR')
    }
  })

  it('path-like names are stored as their last segment; nothing is written outside the upload and blob directories', async () => {
    const root = path.dirname(uploadDir)
    const blobDir = stack.env.QUIRE_BLOB_DIR!
    const before = new Set(listTree(root))
    const pdf = await invoicePdf()
    const res = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key: keyNames,
      form: fileForm('files', [
        { name: '../../etc/passwd', bytes: pdf, type: 'application/pdf' },
        { name: 'C:\\x\\y.pdf', bytes: pdf, type: 'application/pdf' },
        { name: '/abs/olute/../z.pdf', bytes: pdf, type: 'application/pdf' },
      ]),
    })
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const names = await Promise.all(res.body.map((j: { job_id: string }) => fileNameOf(j.job_id)))
    expect(names).toEqual(['passwd', 'y.pdf', 'z.pdf'])
    await expectUploadDirEmpty()
    const created = listTree(root).filter((p) => !before.has(p))
    expect(created.length).toBeGreaterThan(0)
    for (const p of created) expect(p.startsWith(blobDir + path.sep), p).toBe(true)
    expect(created.some((p) => /passwd|y\.pdf|z\.pdf/.test(p))).toBe(false)
    expect(existsSync(path.resolve(uploadDir, '../../etc/passwd'))).toBe(false)
  })
})

// ---- JSON endpoints -----------------------------------------------------------------------------------------------

describe('JSON endpoints and URLs: invalid input → 4xx', () => {
  const postRaw = async (pathName: string, text: string, headers: Record<string, string>) => {
    const res = await contractFetch(stack.baseUrl, pathName, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: text,
    })
    const raw = await res.text()
    let body: unknown = raw
    try {
      body = JSON.parse(raw)
    } catch {}
    return { status: res.status, body: body as any }
  }
  const endpoints: [string, Record<string, string>][] = [
    ['/v1/webhooks', {}],
    ['/v1/pipelines', {}],
    ['/admin/v1/workspaces', { Authorization: 'Bearer blackbox-admin-token' }],
  ]

  it.each(endpoints)('%s: invalid JSON → 400 MALFORMED_REQUEST', async (p, h) => {
    const res = await postRaw(p, '{"name": "x",', { 'X-API-Key': keyB, ...h })
    await expectRejected(res, 400, 'MALFORMED_REQUEST')
  })

  it.each(endpoints)('%s: a JSON value that is not an object → 400', async (p, h) => {
    for (const text of ['"just a string"', '42', 'null', 'true']) {
      const res = await postRaw(p, text, { 'X-API-Key': keyB, ...h })
      await expectRejected(res, 400, 'MALFORMED_REQUEST')
    }
    // An array is valid JSON but not the object the endpoint needs: the schema rejects it.
    await expectRejected(await postRaw(p, '[1, 2]', { 'X-API-Key': keyB, ...h }), 400, 'INVALID_PARAMETER')
  })

  it('a body that does not match its Content-Encoding → 400, an unknown Content-Encoding → 415', async () => {
    const gz = await postRaw('/v1/webhooks', 'not gzip at all', { 'X-API-Key': keyB, 'Content-Encoding': 'gzip' })
    await expectRejected(gz, 400, 'MALFORMED_REQUEST')
    const unknown = await postRaw('/v1/webhooks', '{}', { 'X-API-Key': keyB, 'Content-Encoding': 'x-unknown' })
    await expectRejected(unknown, 415, 'UNSUPPORTED_MEDIA_TYPE')
    // Found by `npm run chaos` (fuzz): a brotli decoder error was a 500.
    const br = await postRaw('/v1/webhooks', '{"name":"x"}', { 'X-API-Key': keyB, 'Content-Encoding': 'br' })
    await expectRejected(br, 400, 'MALFORMED_REQUEST')
  })

  it('JSON nested thousands of levels deep is 400, never a stack overflow (found by `npm run chaos`)', async () => {
    for (const depth of [100, 5000, 50_000]) {
      const body = `${'['.repeat(depth)}${']'.repeat(depth)}`
      const res = await postRaw('/v1/pipelines', body, { 'X-API-Key': keyB, 'Content-Type': 'application/json' })
      expect(res.status, String(depth)).toBeGreaterThanOrEqual(400)
      expect(res.status, String(depth)).toBeLessThan(500)
    }
    const nested = `{"name":"deep","definition":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`
    const res = await postRaw('/v1/pipelines', nested, { 'X-API-Key': keyB, 'Content-Type': 'application/json' })
    await expectRejected(res, 400, 'VALIDATION_ERROR')
  })

  it('malformed percent-encoding in a path is taken literally: an unknown job, not a 5xx', async () => {
    const res = await call(stack.baseUrl, 'GET', '/v1/jobs/%E0%A4%A', { key: keyB })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: { code: 'job_not_found', message: expect.any(String) } })
  })
})

// Reliability item 4: PostgreSQL refuses NUL in text; a NUL anywhere in a request answered 500. DESIGN: NUL bytes in
// any string → 400 VALIDATION_ERROR, or 404 for ids.
describe('NUL bytes never reach the database', () => {
  it.each([
    ['/v1/jobs/job%00x', 404, 'job_not_found'],
    ['/v1/jobs/%00/cancel', 404, 'job_not_found'],
    ['/v1/webhooks/wh%00', 404, 'NOT_FOUND'],
    ['/v1/documents/doc%00', 404, 'NOT_FOUND'],
    ['/v1/pipelines/pl%00', 404, 'NOT_FOUND'],
  ])('an id with a NUL: %s → 404', async (p, status, code) => {
    const method = p.endsWith('/cancel') ? 'POST' : 'GET'
    const res = await call(stack.baseUrl, method, p, { key: keyB })
    expect(res.status).toBe(status)
    expect(JSON.stringify(res.body)).toContain(code)
  })

  it.each([
    '/v1/jobs?source_tag=a%00b',
    '/v1/jobs?cursor=%00',
    '/v1/pipelines?page=1%00',
    '/v1/credits/ledger?job_id=%00',
  ])('a query value with a NUL: %s → 400 VALIDATION_ERROR', async (p) => {
    const res = await call(stack.baseUrl, 'GET', p, { key: keyB })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: 'VALIDATION_ERROR' })
  })

  it('a JSON string with a NUL (value or key, nested) → 400 VALIDATION_ERROR', async () => {
    for (const json of [
      { name: 'a\u0000b', url: 'https://example.com/hook' },
      { name: 'ok', url: 'https://example.com/hook', headers: { 'X-A\u0000': 'v' } },
    ]) {
      const res = await call(stack.baseUrl, 'POST', '/v1/webhooks', { key: keyB, json })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ error: 'VALIDATION_ERROR' })
    }
    const admin = await call(stack.baseUrl, 'POST', '/admin/v1/workspaces', {
      admin: true,
      json: { name: 'x\u0000', api_form: 'B' },
    })
    expect(admin.status).toBe(400)
    // Half a surrogate pair ("\ud800", which JSON.stringify escapes as such) is not Unicode text either.
    const lone = await call(stack.baseUrl, 'POST', '/admin/v1/workspaces', {
      admin: true,
      json: { name: 'x\ud800y', api_form: 'B' },
    })
    expect(lone.status).toBe(400)
    expect(lone.body).toMatchObject({ error: 'VALIDATION_ERROR' })
  })

  it('a multipart text field with a NUL → 400 VALIDATION_ERROR, no job', async () => {
    const body = multipartBytes(B, [
      { headers: ['Content-Disposition: form-data; name="client_reference_id"'], content: 'ref\u0000x' },
      filePart('files', 'a.pdf', await invoicePdf()),
    ])
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'VALIDATION_ERROR')
  })

  // DESIGN, Robustness: invalid UTF-8 in any string is the client's error too.
  it('a query value that is not UTF-8 → 400 VALIDATION_ERROR', async () => {
    const res = await call(stack.baseUrl, 'GET', '/v1/jobs?source_tag=%FF%FEx', { key: keyB })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: 'VALIDATION_ERROR' })
  })

  it('a JSON body whose string is not UTF-8 → 400 VALIDATION_ERROR, nothing created', async () => {
    const body = Buffer.concat([
      Buffer.from('{"name":"hook-'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","url":"https://example.com/hook"}'),
    ])
    const res = await fetch(`${stack.baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': keyB, 'Content-Type': 'application/json' },
      body,
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'VALIDATION_ERROR' })
    const hooks = await call(stack.baseUrl, 'GET', '/v1/webhooks', { key: keyB })
    expect(hooks.body.data.filter((h: { name: string }) => h.name.startsWith('hook-'))).toEqual([])
  })

  it('a multipart text field that is not UTF-8 → 400 VALIDATION_ERROR, no job', async () => {
    const body = multipartBytes(B, [
      {
        headers: ['Content-Disposition: form-data; name="client_reference_id"'],
        content: Buffer.from([0x72, 0xff, 0x66]),
      },
      filePart('files', 'a.pdf', await invoicePdf()),
    ])
    await expectRejected(asFlat(await rawSubmit(keyB, body)), 400, 'VALIDATION_ERROR')
  })

  it('a known path with another method → 405 METHOD_NOT_ALLOWED', async () => {
    const res = await call(stack.baseUrl, 'DELETE', '/v1/jobs', { key: keyB })
    expect(res.status).toBe(405)
    expect(res.body).toMatchObject({ error: 'METHOD_NOT_ALLOWED' })
    // RFC 9110 §15.5.6: a 405 names the methods the path takes.
    expect(res.headers.get('allow')?.split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'POST']))
  })
})

describe('requests the HTTP parser rejects: the envelope, and no reset', () => {
  // DESIGN, Robustness: "oversized headers → 4xx with the envelope".
  it('headers over 16 KB → 431 HEADERS_TOO_LARGE in the flat envelope, Connection: close', async () => {
    const res = await rawRequest({
      port,
      head: ['GET /v1/credits HTTP/1.1', 'Host: 127.0.0.1', `X-API-Key: ${keyB}`, `X-Big: ${'b'.repeat(70_000)}`],
      contract: true,
    })
    expect(res.status).toBe(431)
    expect(res.headers.connection).toBe('close')
    expect(res.json).toMatchObject({ error: 'HEADERS_TOO_LARGE', message: expect.any(String) })
    expect(new Date(res.json.timestamp).toISOString()).toBe(res.json.timestamp)
  })

  it('a request line that is not HTTP → 400 MALFORMED_REQUEST in the flat envelope', async () => {
    const res = await rawRequest({ port, head: ['GET /v1/credits HTTP/1.1 extra', 'Host: 127.0.0.1'] })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'MALFORMED_REQUEST', timestamp: expect.any(String) })
  })

  // A client still writing its oversized request when the 431 goes out must not be reset (a reset can take the
  // unread answer with it, as one fuzz request found): the API keeps reading until the client closes.
  it('after the 431 the API keeps reading: the client’s further writes are not reset', async () => {
    const outcome = await new Promise<{ error: string | null; answer: string }>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
      const chunks: Buffer[] = []
      let error: string | null = null
      socket.on('data', (d) => chunks.push(d))
      socket.on('error', (e) => {
        error = e.message
      })
      socket.on('connect', async () => {
        socket.write(`GET /v1/credits HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(20_000)}`)
        await pollUntil(
          async () => chunks.length,
          (n) => n > 0,
          5_000,
          20,
        )
        for (let i = 0; i < 20 && !error; i++) {
          socket.write('c'.repeat(50_000))
          await new Promise((r) => setTimeout(r, 10))
        }
        await new Promise((r) => setTimeout(r, 100))
        socket.destroy()
        resolve({ error, answer: Buffer.concat(chunks).toString('latin1') })
      })
    })
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 431 /)
    expect(outcome.error).toBeNull()
  })
})

describe('liveness and readiness', () => {
  it('/healthz is 200; /readyz is 200 with every check ok', async () => {
    expect((await call(stack.baseUrl, 'GET', '/healthz')).status).toBe(200)
    const ready = await call(stack.baseUrl, 'GET', '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ ok: true, checks: { postgresql: 'ok', redis: 'ok', migrations: 'ok' } })
  })
})

describe('a client that leaves mid-request', () => {
  /** The API's JSON log lines written after `before` characters of its output. */
  const apiLogLinesSince = (before: number) =>
    stack.logs.api
      .join('')
      .slice(before)
      .split('\n')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as { level: number; msg: string }]
        } catch {
          return [] // not a log line, or one still arriving
        }
      })

  // Reliability item 10: an aborted JSON submission was logged at error level with a stack.
  it('an aborted JSON body is an info-level line, never an error', async () => {
    const before = stack.logs.api.join('').length
    await rawRequest({
      port,
      head: [
        'POST /v1/webhooks HTTP/1.1',
        'Host: 127.0.0.1',
        `X-API-Key: ${keyB}`,
        'Content-Type: application/json',
        'Content-Length: 4000',
      ],
      body: Buffer.from('{"name": "left-early", "url": "https://exa'),
      closeAfterBody: 'destroy',
      timeoutMs: 2000,
    }).catch(() => {})
    const lines = await pollUntil(
      async () => apiLogLinesSince(before),
      (ls) => ls.some((l) => l.msg === 'client aborted the request'),
      10_000,
    )
    expect(lines.find((l) => l.msg === 'client aborted the request')?.level).toBe(30)
    expect(lines.filter((l) => l.level >= 50)).toEqual([])
  })

  // An upload whose client leaves while its key is checked (before the body is read) reached the multipart parser
  // with its stream already destroyed, and the parser waited for it forever: about one in seven such requests never
  // ended, each holding its handler and context. Every one must end, as an aborted request.
  it('every upload abandoned right after its headers ends as an aborted request (none waits forever)', async () => {
    const before = stack.logs.api.join('').length
    const abandoned = 40
    for (let i = 0; i < abandoned; i++) {
      await rawRequest({
        port,
        head: [
          'POST /v1/jobs HTTP/1.1',
          'Host: 127.0.0.1',
          `X-API-Key: ${keyB}`,
          'Content-Type: multipart/form-data; boundary=LEFT',
          'Content-Length: 100000',
        ],
        closeAfterBody: 'destroy',
        timeoutMs: 2000,
      }).catch(() => {})
    }
    const aborted = await pollUntil(
      async () => apiLogLinesSince(before).filter((l) => l.msg === 'client aborted the request').length,
      (n) => n >= abandoned,
      10_000,
    )
    expect(aborted).toBe(abandoned)
    await expectUploadDirEmpty()
    await expectNoJobs(keyB)
  })
})

describe('afterwards', () => {
  it('the API logged no unexpected (5xx) error for any of the above', () => {
    expect(stack.logs.api.join('')).not.toContain('unexpected error')
  })
})
