// Foundation, black box: the three apps run as separate processes; a client submits a real PDF in each form,
// polls to completed, and a real HTTPS receiver checks each webhook signature with its own HMAC computation.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { openApiValidator } from '../../apps/api/src/openapi/openapi-validator.test-helper.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()

const hmacHex = (secret: string, data: string | Buffer) => createHmac('sha256', secret).update(data).digest('hex')
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
const header = (h: Record<string, string | string[]>, name: string) => {
  const v = h[name.toLowerCase()]
  return Array.isArray(v) ? v[0]! : (v ?? '')
}

describe('Form A, end to end', () => {
  it('submits a PDF, runs every stage to completed, settles credits and delivers a signed destination.exited', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A', { credits: 100 })
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'receiver', url: ctx.receiver.url, auth_type: 'NONE', events: ['job.failed'] },
    })
    // spec: POST /v1/webhooks Form A → 201 with hmac_secret returned once
    expect(hook.status).toBe(201)
    const secret = hook.body.hmac_secret as string
    expect(secret).toMatch(/.{20,}/)
    const pipeline = await call(ctx.stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: {
        name: 'invoices',
        definition: {
          document_types: [{ name: 'invoice', keywords: ['invoice'], schema_id: 'invoice' }],
          bindings: { destination: { exit_webhook_id: hook.body.id } },
        },
      },
    })
    expect(pipeline.status).toBe(201)
    const pipelineId = pipeline.body.id as string

    // spec: unpublished pipeline is rejected with 400 PIPELINE_NOT_PUBLISHED, and no job is created
    const pdf = await invoicePdf()
    const rejected = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: pdf }], { pipeline_id: pipelineId }),
    })
    expect(rejected.status).toBe(400)
    expect(rejected.body.error).toBe('PIPELINE_NOT_PUBLISHED')
    expect(typeof rejected.body.timestamp).toBe('string')

    const published = await call(ctx.stack.baseUrl, 'POST', `/v1/pipelines/${pipelineId}/versions/1/publish`, { key })
    expect(published.status).toBe(200)

    const submit = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: pdf, type: 'application/pdf' }], {
        pipeline_id: pipelineId,
        source_tag: 'bb-foundation',
      }),
    })
    // spec: Form A submit → 202, status processing, stage_now init, pipeline {id, version}, documents count
    expect(submit.status).toBe(202)
    expect(submit.body).toMatchObject({
      status: 'processing',
      stage_now: 'init',
      pipeline: { id: pipelineId, version: 'v1' },
      documents: 1,
      source_tag: 'bb-foundation',
    })
    expect(Date.parse(submit.body.created_at)).not.toBeNaN()
    const jobId = submit.body.id as string

    // DESIGN: credits reserved at submission = pages × per_page (1 page, 1 credit)
    const during = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(during.body.available + during.body.reserved + during.body.spent).toBe(100)

    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status !== 'processing',
    )
    expect(done.body.status).toBe('completed')
    expect(Number.isInteger(done.body.machine_seconds)).toBe(true)
    expect(done.body.documents).toHaveLength(1)
    expect(done.body.documents[0]).toMatchObject({ id: expect.any(String), status: 'completed' })
    // spec: trace entries {stage, ms, ok} with Form A stage names
    const stages = done.body.trace.map((t: { stage: string }) => t.stage)
    expect(stages).toEqual(
      expect.arrayContaining(['init', 'parse', 'splitclassify', 'extract', 'validate', 'destination']),
    )
    for (const t of done.body.trace) expect(t).toMatchObject({ ms: expect.any(Number), ok: true })

    // spec: reservation settles to the amount used (1 page × 1 credit)
    const after = await call(ctx.stack.baseUrl, 'GET', '/v1/credits', { key })
    expect(after.body).toMatchObject({ available: 99, reserved: 0, spent: 1 })

    // DESIGN: documents carry extracted data in {value, confidence}
    const doc = await call(ctx.stack.baseUrl, 'GET', `/v1/documents/${done.body.documents[0].id}`, { key })
    expect(doc.status).toBe(200)
    expect(doc.body.data.invoice_number).toMatchObject({ value: 'INV-2026-0042' })
    expect(doc.body.data.amount).toMatchObject({ value: 1200 })

    // spec: destination.exited to the bound exit webhook, signed sha256=<hex HMAC(raw body)>
    const delivery = await ctx.receiver.waitFor(
      (r) => r.rawBody.toString().includes(jobId) && r.rawBody.toString().includes('destination.exited'),
      20_000,
    )
    const sig = header(delivery.headers, 'X-Service-Signature')
    expect(sameText(sig, `sha256=${hmacHex(secret, delivery.rawBody)}`)).toBe(true)
    expect(header(delivery.headers, 'User-Agent')).toBe('Service-Webhook/1.0')
    const body = JSON.parse(delivery.rawBody.toString())
    expect(body).toMatchObject({
      type: 'destination.exited',
      job_id: jobId,
      stage: 'destination',
      transition: 'exited',
    })
    expect(body.id).toBe(header(delivery.headers, 'X-Service-Delivery-Id'))
    expect(Number.isInteger(body.timestamp)).toBe(true)
    // spec: destination.exited "is the clean job-complete signal"; its snapshot shows the finished job.
    expect(body.data.job).toMatchObject({ job_id: jobId, status: 'completed' })
    expect(body.data.job.completed_at).toEqual(expect.any(String))
    // The delivery is what the API's own description says a Form A receiver gets (OpenAPI `webhooks`).
    const described = openApiValidator((await call(ctx.stack.baseUrl, 'GET', '/v1/openapi.json?form=A')).body)
    expect(described.schemaErrors('FormAWebhookPayload', body)).toEqual([])
  }, 120_000)
})

describe('Form B, end to end', () => {
  it('submits a PDF as files, polls with include=stages,result, and delivers a signed job.completed', async () => {
    const { key, workspaceId } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 50 })
    const hook = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'receiver-b', url: ctx.receiver.url, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    const secret = hook.body.secret as string
    expect(secret).toMatch(/.{20,}/)

    const pdf = await invoicePdf()
    const submit = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs?client_reference_id=ref-42', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: pdf }], { schema_id: 'invoice' }),
    })
    // spec: async → 202 with one submit-response object per file, status queued
    expect(submit.status).toBe(202)
    expect(submit.body).toHaveLength(1)
    const entry = submit.body[0]
    expect(entry).toMatchObject({ status: 'queued', execution_mode: 'async', client_reference_id: 'ref-42' })
    expect(entry.status_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/v1/jobs/${entry.job_id}$`))
    expect(entry.result_url).toBe(`${entry.status_url}?include=result`)

    const done = await pollUntil(
      () => call(ctx.stack.baseUrl, 'GET', `/v1/jobs/${entry.job_id}?include=stages,result`, { key }),
      (r) => ['completed', 'completed_with_errors', 'failed'].includes(r.body.status),
    )
    expect(done.body).toMatchObject({
      job_id: entry.job_id,
      status: 'completed',
      execution_mode: 'async',
      priority: 'standard',
      input: { file_name: 'invoice.pdf', mime_type: 'application/pdf', page_count: 1 },
      client_reference_id: 'ref-42',
    })
    expect(done.body.total_time_taken_ms).toBeGreaterThanOrEqual(0)
    expect(done.body.stages.map((s: { stage: string }) => s.stage)).toEqual(
      expect.arrayContaining(['initialization', 'parse', 'split_classify', 'extract', 'validate', 'destination']),
    )
    const data = done.body.result.documents[0].data
    expect(data.invoice_number.value).toBe('INV-2026-0042')
    expect(data.currency.value).toBe('EUR')

    // spec: X-Service-Signature = v1=<hex HMAC(timestamp + "." + raw body)>, X-Service-Timestamp in epoch seconds
    const delivery = await ctx.receiver.waitFor(
      (r) => r.rawBody.toString().includes(entry.job_id) && r.rawBody.toString().includes('job.completed'),
      20_000,
    )
    const ts = header(delivery.headers, 'X-Service-Timestamp')
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(300)
    const sig = header(delivery.headers, 'X-Service-Signature')
    const [, hex] = sig.split('=')
    expect(sameText(hex!, hmacHex(secret, `${ts}.${delivery.rawBody.toString()}`))).toBe(true)
    const body = JSON.parse(delivery.rawBody.toString())
    expect(body).toMatchObject({
      event: 'job.completed',
      workspace_id: workspaceId,
      webhook_id: hook.body.id,
      data: { job_id: entry.job_id, status: 'completed', documents: [expect.any(String)] },
    })
    expect(typeof body.delivery_id).toBe('string')
    expect(Date.parse(body.occurred_at)).not.toBeNaN()
    // The delivery is what the API's own description says a Form B receiver gets (OpenAPI `webhooks`).
    const described = openApiValidator((await call(ctx.stack.baseUrl, 'GET', '/v1/openapi.json?form=B')).body)
    expect(described.schemaErrors('FormBWebhookPayload', body)).toEqual([])
  }, 120_000)
})

describe('authentication and errors, both envelopes', () => {
  it('rejects a missing or invalid key with 401 and the nested unauthorized envelope', async () => {
    const none = await call(ctx.stack.baseUrl, 'GET', '/v1/jobs')
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('unauthorized')
    const bad = await call(ctx.stack.baseUrl, 'GET', '/v1/jobs', { key: 'qk_not-a-key' })
    expect(bad.status).toBe(401)
    expect(bad.body.error).toMatchObject({ code: 'unauthorized', message: expect.any(String) })
  })

  it("an operator revokes a key (admin API): the next request with it is 401; again is no change; another workspace's key is 404", async () => {
    const base = ctx.stack.baseUrl
    const { workspaceId } = await newWorkspace(base, 'B')
    const issued = await call(base, 'POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      admin: true,
      json: { scopes: ['jobs:read'] },
    })
    const key = issued.body.key as string
    expect((await call(base, 'GET', '/v1/jobs', { key })).status).toBe(200)
    const path = `/admin/v1/workspaces/${workspaceId}/api-keys/${issued.body.id}/revoke`
    expect((await call(base, 'POST', path)).status).toBe(401) // the admin token is required
    const revoked = await call(base, 'POST', path, { admin: true })
    expect(revoked.status).toBe(200)
    expect(revoked.body).toEqual({ id: issued.body.id, revoked_at: expect.any(String) })
    const after = await call(base, 'GET', '/v1/jobs', { key })
    expect(after.status).toBe(401)
    expect(after.body.error.code).toBe('unauthorized')
    const again = await call(base, 'POST', path, { admin: true })
    expect(again.status).toBe(200)
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at)
    const other = await newWorkspace(base, 'B')
    const elsewhere = `/admin/v1/workspaces/${other.workspaceId}/api-keys/${issued.body.id}/revoke`
    expect((await call(base, 'POST', elsewhere, { admin: true })).status).toBe(404)
    expect(
      (await call(base, 'POST', `/admin/v1/workspaces/${workspaceId}/api-keys/key_nope/revoke`, { admin: true }))
        .status,
    ).toBe(404)
  })

  it('every answer carries X-Request-Id (errors and unrouted paths too): a usable caller id echoed, else a new one each time', async () => {
    const base = ctx.stack.baseUrl
    const { key } = await newWorkspace(base, 'B')
    const ids: string[] = []
    for (const [path, opts] of [
      ['/v1/jobs', { key }],
      ['/v1/jobs', {}],
      ['/v1/jobs/job_missing', { key }],
      ['/no/such/route', {}],
      ['/healthz', {}],
    ] as const) {
      const r = await call(base, 'GET', path, opts)
      const id = r.headers.get('x-request-id')
      expect(id, `${path} ${r.status}`).toMatch(/^req_[0-9a-f]{32}$/)
      ids.push(id!)
    }
    expect(new Set(ids).size).toBe(ids.length)
    const mine = await fetch(`${base}/v1/jobs/job_missing`, {
      headers: { 'X-API-Key': key, 'X-Request-Id': 'trace-7f3a.1:worker_2' },
    })
    expect(mine.status).toBe(404)
    expect(mine.headers.get('x-request-id')).toBe('trace-7f3a.1:worker_2')
    // An id that could forge a log line or run on is not taken over.
    for (const bad of ['a b', 'x'.repeat(129), 'semi;colon']) {
      const r = await fetch(`${base}/v1/jobs`, { headers: { 'X-API-Key': key, 'X-Request-Id': bad } })
      expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
    }
  })

  it('answers an unknown job id with 404 job_not_found (nested) in both forms', async () => {
    for (const form of ['A', 'B'] as const) {
      const { key } = await newWorkspace(ctx.stack.baseUrl, form)
      const r = await call(ctx.stack.baseUrl, 'GET', '/v1/jobs/job_doesnotexist', { key })
      expect(r.status).toBe(404)
      expect(r.body.error.code).toBe('job_not_found')
    }
  })

  it('answers a key without the scope with 403 insufficient_scope (DESIGN)', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { scopes: ['jobs:read'] })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'a.pdf', bytes: await invoicePdf() }]),
    })
    expect(r.status).toBe(403)
    expect(r.body.error.code).toBe('insufficient_scope')
  })

  // DESIGN, Scopes: "`webhook:write` (Form A), `webhooks:write` (Form B)": each form's own name grants it.
  it("a key holding only the other form's webhook write scope cannot create webhooks: 403 insufficient_scope", async () => {
    for (const [form, other, own] of [
      ['A', 'webhooks:write', 'webhook:write'],
      ['B', 'webhook:write', 'webhooks:write'],
    ] as const) {
      const json = { name: `w-${form}`, url: 'https://8.8.8.8/hook', ...(form === 'A' ? { auth_type: 'NONE' } : {}) }
      const { key } = await newWorkspace(ctx.stack.baseUrl, form, { scopes: [other] })
      const r = await call(ctx.stack.baseUrl, 'POST', '/v1/webhooks', { key, json })
      expect(r.status, form).toBe(403)
      expect(r.body.error.code).toBe('insufficient_scope')
      expect(r.body.error.message).toContain(own)
    }
  })

  it('Form B: a file sent as `file` gives 400 MISSING_PART (flat envelope)', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'a.pdf', bytes: await invoicePdf() }]),
    })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'MISSING_PART', message: expect.any(String), timestamp: expect.any(String) })
  })

  it('402 PAYMENT_REQUIRED when credits run short, and no job is created', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B', { credits: 0 })
    const r = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'a.pdf', bytes: await invoicePdf() }]),
    })
    expect(r.status).toBe(402)
    expect(r.body.error).toBe('PAYMENT_REQUIRED')
    const list = await call(ctx.stack.baseUrl, 'GET', '/v1/jobs', { key })
    expect(list.body.data).toHaveLength(0)
  })
})
