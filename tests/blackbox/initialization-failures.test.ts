// Intake vs initialization, black box (DESIGN, "Processing lifecycle"): a file of a recognised type whose content is
// damaged, truncated or encrypted is accepted (202, one page reserved), then fails in `initialization` with the
// cause; its hold is released and `job.failed` is delivered. Besides truncated and encrypted files, full-length ones
// damaged inside (a PDF whose objects are junk between an intact header and trailer, a PNG with junk IDAT data and
// valid CRCs, a JPEG with junk scan data), which only reading the content finds out.
import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { docxBomb, pngBomb } from '../fixtures/bombs.ts'
import { damagedFiles, fullLengthDamagedFiles, type DamagedCase } from '../fixtures/damaged-files.ts'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()
let cases: DamagedCase[]
beforeAll(async () => {
  cases = [...(await damagedFiles()), ...(await fullLengthDamagedFiles())]
})

const payloads = (path: string) =>
  ctx.receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.rawBody.toString('utf8')))

async function ledgerFor(key: string, jobId: string) {
  const r = await call(ctx.stack.baseUrl, 'GET', `/v1/credits/ledger?job_id=${jobId}`, { key })
  return (r.body.data as { kind: string; amount: number }[]).map((e) => `${e.kind}:${e.amount}`).sort()
}

describe('Form B: damaged (full length), truncated and encrypted files of every type', () => {
  it('202 queued, then failed at initialization with {code, message, stage}; hold released; job.failed', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 100 })
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'failures', url: `${ctx.receiver.origin}/b-init`, events: ['job.failed'] },
    })
    expect(hook.status).toBe(201)
    const submitted: { c: DamagedCase; jobId: string }[] = []
    for (const c of cases) {
      const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm('files', [{ name: c.name, bytes: c.bytes }]),
      })
      // Spec: unsupported types are 422; these types are supported, so intake accepts them.
      expect(r.status, c.name).toBe(202)
      expect(r.body[0].status, c.name).toBe('queued')
      submitted.push({ c, jobId: r.body[0].job_id })
    }
    for (const { c, jobId } of submitted) {
      const done = await pollUntil(
        () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages`, { key }),
        (x) => x.body.status === 'failed',
        60_000,
      )
      expect(done.body.error, c.name).toMatchObject({ code: c.code, stage: 'initialization' })
      expect(done.body.error.message, c.name).toContain(c.name)
      expect(done.body.error.message, c.name).toMatch(c.code === 'encrypted_file' ? /encrypted/i : /damaged/i)
      expect(done.body.input.mime_type, c.name).toContain(c.type === 'docx' ? 'wordprocessingml' : c.type)
      const init = done.body.stages.find((s: { stage: string }) => s.stage === 'initialization')
      expect(init.status, c.name).toBe('failed')
      expect(
        done.body.stages.some((s: { stage: string }) => s.stage === 'parse'),
        c.name,
      ).toBe(false)
      // DESIGN: pages that can't be counted reserve credits.per_page × 1; the whole hold is released on failure.
      const entries = await ledgerFor(key, jobId)
      expect(entries, c.name).toContain('reserve:1')
      expect(
        entries.some((e) => e.startsWith('settle')),
        c.name,
      ).toBe(false)
    }
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 100, reserved: 0, spent: 0 })
    await pollUntil(
      async () => payloads('/b-init'),
      (p) => p.length >= submitted.length,
      30_000,
    )
    const failedEvents = payloads('/b-init')
    for (const { c, jobId } of submitted) {
      const event = failedEvents.find((p) => p.data.job_id === jobId)
      expect(event, c.name).toMatchObject({
        event: 'job.failed',
        data: { status: 'failed', error: { code: c.code, stage: 'initialization' } },
      })
    }
  }, 180_000)

  it('an unrecognised type is still refused at intake: 422 UNSUPPORTED_FILE_TYPE', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 10 })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'notes.pdf', bytes: new TextEncoder().encode('just text, not a PDF\n') }]),
    })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('UNSUPPORTED_FILE_TYPE')
  })
})

describe('Form A: a damaged file', () => {
  it('fails at init with the cause as message, hold released, job.failed to subscribed bound webhooks', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A', { credits: 50 })
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'a-fail', url: `${ctx.receiver.origin}/a-init`, auth_type: 'NONE', events: ['job.failed'] },
    })
    const p = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'p', definition: { bindings: { destination: { exit_webhook_id: hook.body.id } } } },
    })
    await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    for (const c of cases.filter((x) => x.name === 'truncated.pdf' || x.name === 'encrypted.docx')) {
      const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm('file', [{ name: c.name, bytes: c.bytes }], { pipeline_id: p.body.id }),
      })
      expect(r.status, c.name).toBe(202)
      expect(r.body).toMatchObject({ status: 'processing', stage_now: 'init', documents: 1 })
      const done = await pollUntil(
        () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${r.body.id}`, { key }),
        (x) => x.body.status === 'failed',
        60_000,
      )
      expect(done.body.failed_stage).toBe('initialization') // DESIGN, "Processing lifecycle"
      expect(done.body.error).toContain(c.name)
      expect(done.body.trace).toContainEqual(expect.objectContaining({ stage: 'init', ok: false }))
      const event = await ctx.receiver.waitFor(
        (req) => req.path === '/a-init' && JSON.parse(req.rawBody.toString('utf8')).job_id === r.body.id,
        30_000,
      )
      expect(JSON.parse(event.rawBody.toString('utf8'))).toMatchObject({ type: 'job.failed', job_id: r.body.id })
    }
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 50, reserved: 0, spent: 0 })
    // A sound file still goes through on the same pipeline.
    const ok = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'ok.pdf', bytes: await invoicePdf() }], { pipeline_id: p.body.id }),
    })
    await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${ok.body.id}`, { key }),
      (x) => x.body.status === 'completed',
      60_000,
    )
  }, 120_000)
})

describe('decompression bombs (DESIGN: what a file may cost is bounded while it is read)', () => {
  it('a DOCX inflating to 400 MB and a 30000 × 30000 PNG: 202 with one page reserved, failed at initialization as too large; the apps stay up and small', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 100 })
    const bombs = [
      { name: 'bomb.docx', bytes: await docxBomb(400) },
      { name: 'huge.png', bytes: await pngBomb(30_000) },
    ]
    for (const b of bombs) {
      const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', { key, form: fileForm('files', [b]) })
      expect(r.status, b.name).toBe(202)
      const done = await pollUntil(
        () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${r.body[0].job_id}`, { key }),
        (x) => x.body.status === 'failed',
        90_000,
      )
      expect(done.body.error, b.name).toMatchObject({ code: 'file_too_large', stage: 'initialization' })
      expect(done.body.input.page_count, b.name).toBe(1)
    }
    const credits = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(credits.body).toMatchObject({ available: 100, reserved: 0, spent: 0 })
    // Memory of the processes that read them (the parse processes are the stage worker's children).
    for (const app of ['api', 'stage-worker'] as const) {
      const pid = ctx.stack.pid(app)
      expect(pid, app).toBeDefined()
      const rssKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
      expect(rssKb / 1024, `${app} peak RSS MB`).toBeLessThan(app === 'api' ? 512 : 1024)
    }
  }, 240_000)
})
