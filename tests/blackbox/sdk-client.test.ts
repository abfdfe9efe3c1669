// @quire/client against the real stack, one full path per form: submit, wait, read the result, receive the webhook
// over HTTPS and verify it with the package's helpers. The SDK is the integrator here, not tests/blackbox/client.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { createClient, QuireApiError, verifyFormA, verifyFormB, WebhookVerificationError } from '@quire/client'
import { afterAll, describe, expect, it } from 'vitest'
import { invoicePdf, textPdf } from '../fixtures/make-fixtures.ts'
import { newWorkspace } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver()
const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-sdk-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const received = (hookPath: string, jobId: string) =>
  ctx.receiver.waitFor((r) => r.path === hookPath && r.rawBody.includes(jobId), 60_000)

describe('@quire/client, Form A', () => {
  it('submits a file path, waits, reads fields and lists, verifies destination.exited, rotates and deletes the webhook', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'A')
    const client = createClient({ form: 'A', baseUrl: ctx.stack.baseUrl, apiKey: key })
    const hook = await client.createWebhook({
      name: 'sdk-a',
      url: `${ctx.receiver.origin}/sdk-a`,
      auth_type: 'NONE',
      events: ['destination.exited'],
    })
    const definition = { bindings: { destination: { exit_webhook_id: hook.id } } }
    const pipeline = await client.raw.POST('/v1/pipelines', { body: { name: 'sdk-a', definition } })
    const pipelineId = pipeline.data!.id
    await client.raw.POST('/v1/pipelines/{id}/versions/{n}/publish', { params: { path: { id: pipelineId, n: '1' } } })

    const file = path.join(dir, 'invoice-a.pdf')
    writeFileSync(file, await invoicePdf())
    const job = await client.submitAndWait(
      [file],
      { pipeline_id: pipelineId, source_tag: 'sdk' },
      { timeoutMs: 90_000 },
    )
    expect(job.status).toBe('completed')
    const fields = await client.jobFields(job.id)
    expect(fields.length).toBeGreaterThan(0)
    expect(fields.some((f) => Object.keys(f.data).length > 0)).toBe(true)

    const listed = []
    for await (const j of client.jobs({ limit: 1 })) listed.push(j.id)
    expect(listed).toContain(job.id)
    const documents = []
    for await (const d of client.documents({ job_id: job.id, limit: 1 })) documents.push(d.id)
    expect(documents.sort()).toEqual(job.documents.map((d) => d.id).sort())

    const delivery = await received('/sdk-a', job.id)
    const event = verifyFormA(delivery.rawBody, delivery.headers, hook.hmac_secret)
    expect(event).toMatchObject({ type: 'destination.exited', job_id: job.id })
    expect(() => verifyFormA(Buffer.from(`${delivery.rawBody} `), delivery.headers, hook.hmac_secret)).toThrow(
      WebhookVerificationError,
    )

    const rotated = await client.rotateWebhookSecret(hook.id)
    expect(rotated.hmac_secret).not.toBe(hook.hmac_secret)
    expect(() => verifyFormA(delivery.rawBody, delivery.headers, rotated.hmac_secret)).toThrow(/signature/)
    await client.deleteWebhook(hook.id)
    // A second delete is a flat-envelope 404; an unknown job a nested one: both are QuireApiError.
    await expect(client.deleteWebhook(hook.id)).rejects.toMatchObject({ name: 'QuireApiError', status: 404 })
    const missing = await client.getJob('job_does_not_exist').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(QuireApiError)
    expect(missing).toMatchObject({ status: 404, code: 'job_not_found' })
    // The API's X-Request-Id rides on the error, for a user to quote.
    expect((missing as QuireApiError).requestId).toMatch(/^req_[0-9a-f]{32}$/)
  })
})

describe('@quire/client, Form B', () => {
  it('submits a stream, reviews the parked document, waits, reads the result and verifies job.completed', async () => {
    const { key } = await newWorkspace(ctx.stack.baseUrl, 'B')
    const client = createClient({ form: 'B', baseUrl: ctx.stack.baseUrl, apiKey: key })
    const hook = await client.createWebhook({ name: 'sdk-b', url: `${ctx.receiver.origin}/sdk-b`, events: ['*'] })
    // A purchase order without its required PO number: parked in_review until a reviewer supplies it.
    const definition = {
      document_types: [{ name: 'po', keywords: ['purchase order'], schema_id: 'po' }],
      schemas: { po: { fields: [{ name: 'po_number', labels: ['PO Number'], required: true }] } },
    }
    const pipeline = await client.raw.POST('/v1/pipelines', { body: { name: 'sdk-b', definition } })
    const pipelineId = pipeline.data!.id
    await client.raw.POST('/v1/pipelines/{id}/versions/{n}/publish', { params: { path: { id: pipelineId, n: '1' } } })

    const pdf = await textPdf([['PURCHASE ORDER', 'Buyer: Contoso Ltd']])
    const [submitted] = await client.submit([{ data: Readable.from([Buffer.from(pdf)]), name: 'po.pdf' }], {
      pipeline_id: pipelineId,
    })
    const jobId = submitted!.job_id
    let parked: string | undefined
    const deadline = Date.now() + 60_000
    while (!parked && Date.now() < deadline) {
      for await (const d of client.documents({ job_id: jobId, status: 'in_review' })) parked = d.id
      if (!parked) await new Promise((r) => setTimeout(r, 250))
    }
    expect(parked).toBeDefined()
    await client.reviewDocument(parked!, { action: 'approve', data: { po_number: 'PO-7' } })

    const job = await client.waitForJob(jobId, { timeoutMs: 60_000 })
    expect(job.status).toBe('completed')
    expect(await client.jobFields(jobId)).toEqual([
      { document_id: parked, data: expect.objectContaining({ po_number: { value: 'PO-7', confidence: 1 } }) },
    ])
    expect((await client.getDocument(parked!)).data.po_number).toEqual({ value: 'PO-7', confidence: 1 })

    const delivery = await ctx.receiver.waitFor(
      (r) => r.path === '/sdk-b' && r.rawBody.includes('"job.completed"') && r.rawBody.includes(jobId),
      60_000,
    )
    const event = verifyFormB(delivery.rawBody, delivery.headers, hook.secret)
    expect(event).toMatchObject({ event: 'job.completed', data: { job_id: jobId, status: 'completed' } })
    const late = { toleranceSeconds: 300, now: Date.now() + 301_000 }
    expect(() => verifyFormB(delivery.rawBody, delivery.headers, hook.secret, late)).toThrow(WebhookVerificationError)

    // mode=sync: a small file finishes inside the window, so the answer is the final job with its result.
    const [sync] = await client.submitAndWait([{ data: await invoicePdf(), name: 'invoice.pdf' }], { mode: 'sync' })
    expect(sync).toMatchObject({ status: 'completed', execution_mode: 'sync' })
    const rotated = await client.rotateWebhookSecret(hook.id)
    expect(rotated.secret).not.toBe(hook.secret)
    await client.deleteWebhook(hook.id)
  })
})
