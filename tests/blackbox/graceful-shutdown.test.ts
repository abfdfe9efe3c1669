// DESIGN "Robustness and operations": "SIGTERM drains: no new work, in-flight work finished or handed back."
// Black box: SIGTERM is sent to real app processes in the middle of a job or a request (QUIRE_SHUTDOWN_GRACE_MS).
import http from 'node:http'
import { describe, expect, it } from 'vitest'
import { invoicePdf, scannedPdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()

/** Submits a three-page scanned PDF (OCR keeps parse busy for seconds) and waits until parse runs. */
async function jobInParse(key: string) {
  const pages = [1, 2, 3].map((n) => [`Scanned page ${n}`, `Invoice Number: DRAIN-${n}00`, 'Total Due: 50.00 EUR'])
  const submit = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('files', [{ name: 'scan.pdf', bytes: await scannedPdf(pages) }]),
  })
  expect(submit.status).toBe(202)
  const jobId = submit.body[0].job_id as string
  const url = `/v1/jobs/${jobId}?include=stages,result`
  await pollUntil(
    () => call(ctx.stack.baseUrl, 'GET', url, { key }),
    (r) => r.body.stages?.some((s: { stage: string; status: string }) => s.stage === 'parse' && s.status === 'running'),
    60_000,
    50,
  )
  return { jobId, url }
}

async function completesOnce(key: string, url: string, credits: { available: number; spent: number }) {
  const done = await pollUntil(
    () => call(ctx.stack.baseUrl, 'GET', url, { key }),
    (r) => ['completed', 'completed_with_errors', 'failed'].includes(r.body.status),
    120_000,
  )
  expect(done.body.status).toBe('completed')
  expect(done.body.result.documents).toHaveLength(1)
  const balance = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
  expect(balance.body).toMatchObject({ ...credits, reserved: 0 })
  return done
}

async function sigterm(app: 'stage-worker' | 'api') {
  const logsBefore = ctx.stack.logs[app].length
  const started = Date.now()
  await ctx.stack.kill(app, 'SIGTERM')
  return { tookMs: Date.now() - started, log: ctx.stack.logs[app].slice(logsBefore).join('') }
}

describe('SIGTERM drains', () => {
  it('a stage worker whose grace runs out hands its job back; a new worker completes it once', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 20 })
    await ctx.stack.kill('stage-worker', 'SIGKILL')
    await ctx.stack.start('stage-worker', { QUIRE_SHUTDOWN_GRACE_MS: '200', QUIRE_LOG_LEVEL: 'info' })
    const { url } = await jobInParse(key)
    const stopped = await sigterm('stage-worker')
    // It exited by itself (the harness would only SIGKILL after 10 s) and said what it did.
    expect(stopped.tookMs).toBeLessThan(9_000)
    expect(stopped.log).toMatch(/job handed back to the queue/)
    await ctx.stack.start('stage-worker')
    const done = await completesOnce(key, url, { available: 17, spent: 3 })
    expect(done.body.stages.find((s: { stage: string }) => s.stage === 'parse').attempts).toBeGreaterThanOrEqual(2)
  }, 240_000)

  it('a stage worker with enough grace finishes the stage under way before it exits', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 20 })
    await ctx.stack.kill('stage-worker', 'SIGKILL')
    await ctx.stack.start('stage-worker', { QUIRE_SHUTDOWN_GRACE_MS: '60000', QUIRE_LOG_LEVEL: 'info' })
    const { url } = await jobInParse(key)
    const stopped = await sigterm('stage-worker')
    expect(stopped.log).toMatch(/jobs under way finished/)
    const between = await call(ctx.stack.baseUrl, 'GET', url, { key })
    const parse = between.body.stages.find((s: { stage: string }) => s.stage === 'parse')
    expect(parse).toMatchObject({ status: 'completed', attempts: 1 })
    await ctx.stack.start('stage-worker')
    await completesOnce(key, url, { available: 17, spent: 3 })
  }, 240_000)

  it('the API finishes an upload under way, then exits', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const boundary = 'quire-drain-boundary'
    const pdf = Buffer.from(await invoicePdf())
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="slow.pdf"\r\n` +
        'Content-Type: application/pdf\r\n\r\n',
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const url = new URL('/v1/jobs', ctx.stack.baseUrl)
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          headers: { 'X-API-Key': key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        },
        (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      req.write(head)
      req.write(pdf.subarray(0, 100))
      // The rest arrives after the API was told to stop.
      setTimeout(() => {
        req.write(pdf.subarray(100))
        req.end(tail)
      }, 1500)
    })
    await new Promise((r) => setTimeout(r, 300))
    const stopping = sigterm('api')
    const res = await answer
    expect(res.status, res.body).toBe(202)
    await stopping
    // It no longer accepts connections.
    await expect(fetch(`${ctx.stack.baseUrl}/healthz`)).rejects.toThrow()
    await ctx.stack.start('api')
  }, 120_000)
})
