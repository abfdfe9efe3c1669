// Crash safety, black box: the stage worker is killed with SIGKILL in the middle of a job, as production would
// lose a container. A new worker takes the job over; it completes once, with one set of documents, one settlement
// and one completion webhook. The API killed in the middle of an upload leaves a partial temporary file, which the
// restarted API removes.
import { readdir } from 'node:fs/promises'
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { INVOICE_LINES, scannedPdf, textPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()

describe('a stage worker killed mid-job', () => {
  it('is replaced and the job completes exactly once (DESIGN: stages are idempotent, nothing lost on a crash)', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 20 })
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'crash', url: ctx.receiver.url, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    // Three scanned pages: parse needs OCR, which keeps the worker busy long enough to kill it mid-stage.
    const pages = [1, 2, 3].map((n) => [`Scanned page ${n}`, `Invoice Number: SCAN-${n}00`, 'Total Due: 50.00 EUR'])
    const submit = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'scan.pdf', bytes: await scannedPdf(pages) }]),
    })
    expect(submit.status).toBe(202)
    const jobId = submit.body[0].job_id as string
    const url = `/v1/jobs/${jobId}?include=stages,result`

    await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', url, { key }),
      (r) =>
        r.body.stages?.some((s: { stage: string; status: string }) => s.stage === 'parse' && s.status === 'running'),
      60_000,
      50,
    )
    await ctx.stack.kill('stage-worker', 'SIGKILL')
    const whileDown = await call(ctx.stack.baseUrl, 'GET', url, { key })
    expect(whileDown.body.status).toBe('processing')
    await ctx.stack.start('stage-worker')

    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', url, { key }),
      (r) => ['completed', 'completed_with_errors', 'failed'].includes(r.body.status),
      120_000,
    )
    expect(done.body.status).toBe('completed')
    const parse = done.body.stages.find((s: { stage: string }) => s.stage === 'parse')
    expect(parse.attempts).toBeGreaterThanOrEqual(2)
    expect(done.body.result.documents).toHaveLength(1)
    expect(done.body.result.documents[0].data.invoice_number.value).toMatch(/^SCAN-\d00$/)

    // One settlement: 3 pages × 1 credit, nothing still held.
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 17, reserved: 0, spent: 3 })

    // One completion event, one delivery.
    await ctx.receiver.waitFor((r) => r.rawBody.toString().includes(jobId), 20_000)
    await new Promise((r) => setTimeout(r, 1000))
    const deliveries = ctx.receiver.received.filter((r) => r.rawBody.toString().includes(jobId))
    expect(new Set(deliveries.map((d) => JSON.parse(d.rawBody.toString()).delivery_id)).size).toBe(1)
  }, 240_000)
})

describe('the API killed mid-upload', () => {
  it('leaves a partial temporary file that the restarted API removes (QUIRE_UPLOAD_STALE_MS), and serves again', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 5 })
    const uploads = ctx.stack.env.QUIRE_UPLOAD_DIR!
    const { port } = new URL(ctx.stack.baseUrl)
    // A client that announces 10 MB and sends the first 256 KB of its file part, then waits.
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('connect', resolve))
    const boundary = 'quire-crash-upload'
    socket.write(
      [
        'POST /v1/jobs HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `X-API-Key: ${key}`,
        `Content-Type: multipart/form-data; boundary=${boundary}`,
        `Content-Length: ${10 * 1024 * 1024}`,
        '',
        `--${boundary}`,
        'Content-Disposition: form-data; name="files"; filename="big.pdf"',
        'Content-Type: application/pdf',
        '',
        '%PDF-1.7\n',
      ].join('\r\n'),
    )
    socket.write(Buffer.alloc(256 * 1024, 0x20))
    const partial = await pollUntil(
      () => readdir(uploads),
      (files) => files.length > 0,
      30_000,
      50,
    )

    await ctx.stack.kill('api', 'SIGKILL')
    socket.destroy()
    expect(await readdir(uploads)).toEqual(partial) // nobody removed it: the process that owned it is gone

    await ctx.stack.start('api', { QUIRE_UPLOAD_STALE_MS: '2000' })
    await pollUntil(
      () => readdir(uploads),
      (files) => files.length === 0,
      30_000,
    )
    const after = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: await textPdf([INVOICE_LINES]) }]),
    })
    expect(after.status).toBe(202)
  }, 240_000)
})
