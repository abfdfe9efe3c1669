// Webhooks, black box: creation rules, secrets, delivery auth, retries and endpoint health, per form.
import { createHmac } from 'node:crypto'
import { startHttpsReceiver, type HttpsReceiver } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
let strict: Stack
let receiver: HttpsReceiver
// The receiver answers per path: /hook/fail-N fails the first N attempts of each delivery, /hook/down always fails.
const attemptsById = new Map<string, number>()

beforeAll(async () => {
  receiver = await startHttpsReceiver({
    respond: ({ path, headers }) => {
      const id = String(headers['x-service-delivery-id'] ?? '')
      const n = (attemptsById.get(id) ?? 0) + 1
      attemptsById.set(id, n)
      if (path.endsWith('/down')) return { status: 503 }
      const m = /fail-(\d+)/.exec(path)
      if (m && n <= Number(m[1])) return { status: n % 2 ? 500 : 302, headers: { Location: 'https://example.com/' } }
      return { status: 204 }
    },
  })
  ;[stack, strict] = await Promise.all([
    startStack({ receiverCa: receiver.ca }),
    startStack({ env: { QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'false' } }),
  ])
}, 180_000)
afterAll(async () => {
  await Promise.all([stack?.stop(), strict?.stop()])
  await receiver?.close()
})

const header = (h: Record<string, string | string[]>, name: string) => {
  const v = h[name.toLowerCase()]
  return Array.isArray(v) ? v[0]! : (v ?? '')
}

async function formAPipelineWith(key: string, hookId: string) {
  const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
    key,
    json: { name: `p-${hookId}`, definition: { bindings: { destination: { exit_webhook_id: hookId } } } },
  })
  await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
  return p.body.id as string
}

describe('creating webhooks', () => {
  it('Form A: secret returned once as hmac_secret, then reads back as ***; duplicate name → 409', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A')
    const created = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'n1', url: receiver.url, auth_type: 'NONE' },
    })
    expect(created.status).toBe(201)
    expect(created.body.hmac_secret).not.toBe('***')
    const read = await call(stack.baseUrl, 'GET', `/v1/webhooks/${created.body.id}`, { key })
    expect(read.body).toMatchObject({ hmac_secret: '***', status: 'active', name: 'n1' })
    const dup = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'n1', url: receiver.url, auth_type: 'NONE' },
    })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('WEBHOOK_NAME_CONFLICT')
    const rotated = await call(stack.baseUrl, 'POST', `/v1/webhooks/${created.body.id}/rotate`, { key })
    expect(rotated.status).toBe(200)
    expect(rotated.body.hmac_secret).not.toBe(created.body.hmac_secret)
    expect(rotated.body.hmac_secret).not.toBe('***')
  })

  it('Form B: secret returned once as secret, omitted on read; events default to all', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const created = await call(stack.baseUrl, 'POST', '/v1/webhooks', { key, json: { name: 'b1', url: receiver.url } })
    expect(created.status).toBe(201)
    expect(typeof created.body.secret).toBe('string')
    const read = await call(stack.baseUrl, 'GET', `/v1/webhooks/${created.body.id}`, { key })
    expect(read.body.secret).toBeUndefined()
    expect(read.body).toMatchObject({ status: 'active', events: ['*'] })
    const list = await call(stack.baseUrl, 'GET', '/v1/webhooks?page=1&page_size=10', { key })
    expect(list.body.page).toEqual({ page: 1, page_size: 10, total: 1 })
  })

  it("rejects non-https, private/loopback/link-local, reserved X-Service- headers (static or the credential's) and unknown events with 422", async () => {
    for (const form of ['A', 'B'] as const) {
      const { key } = await newWorkspace(strict.baseUrl, form)
      const base = form === 'A' ? { auth_type: 'NONE' } : {}
      const make = (extra: object) =>
        call(strict.baseUrl, 'POST', '/v1/webhooks', {
          key,
          json: { name: `w${Math.random()}`, url: 'https://8.8.8.8/hook', ...base, ...extra },
        })
      for (const url of [
        'http://8.8.8.8/hook',
        'https://127.0.0.1/hook',
        'https://10.1.2.3/x',
        'https://169.254.169.254/latest',
        'https://[::1]/x',
        'https://localhost/x',
      ]) {
        const r = await make({ url })
        expect(r.status, url).toBe(422)
        expect(r.body.error).toBe('INVALID_WEBHOOK_URL')
      }
      const hdr = await make({ headers: { 'X-Service-Signature': 'forged' } })
      expect(hdr.status).toBe(422)
      expect(hdr.body.error).toBe('RESERVED_HEADER')
      // The receiver credential's header is a header too: in the reserved namespace it would be overwritten by the
      // service's own (X-Service-Signature) and the credential silently lost.
      const credential =
        form === 'A'
          ? { auth_type: 'API_KEY', auth: { api_key: 'v', header_name: 'X-Service-Signature' } }
          : { auth: 'apikey', apikey: { location: 'header', name: 'x-service-signature', key: 'v' } }
      const reservedCredential = await make(credential)
      expect(reservedCredential.status).toBe(422)
      expect(reservedCredential.body.error).toBe('RESERVED_HEADER')
      if (form === 'A') {
        // A static header of the credential's own name would be replaced by the credential on every delivery.
        const clash = await make({
          auth_type: 'BASIC',
          auth: { username: 'u', password: 'p' },
          headers: { authorization: 'Bearer x' },
        })
        expect(clash.status).toBe(422)
        expect(clash.body).toMatchObject({
          error: 'RESERVED_HEADER',
          message: expect.stringContaining('authorization'),
        })
      }
      const ev = await make({ events: ['no.such.event'] })
      expect(ev.status).toBe(422)
      expect(ev.body.error).toBe('INVALID_EVENT')
    }
  })
})

describe('Form A deliveries', () => {
  it('sends the API_KEY credential and static headers; retries non-2xx (3xx not followed) with the same body, signature and delivery id', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: {
        name: 'flaky',
        url: `${receiver.url}/fail-2`,
        auth_type: 'API_KEY',
        auth: { api_key: 'receiver-key', header_name: 'X-Receiver-Key' },
        headers: { 'X-Tenant': 'acme' },
      },
    })
    const pipelineId = await formAPipelineWith(key, hook.body.id)
    const job = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'a.pdf', bytes: await invoicePdf() }], { pipeline_id: pipelineId }),
    })
    const jobId = job.body.id
    const attempts = await pollUntil(
      async () => receiver.received.filter((r) => r.path.endsWith('/fail-2') && r.rawBody.toString().includes(jobId)),
      (list) => list.length >= 3,
      60_000,
    )
    expect(attempts).toHaveLength(3)
    const ids = new Set(attempts.map((a) => header(a.headers, 'X-Service-Delivery-Id')))
    expect(ids.size).toBe(1)
    expect(new Set(attempts.map((a) => a.rawBody.toString())).size).toBe(1)
    expect(new Set(attempts.map((a) => header(a.headers, 'X-Service-Signature'))).size).toBe(1)
    for (const a of attempts) {
      expect(header(a.headers, 'X-Receiver-Key')).toBe('receiver-key')
      expect(header(a.headers, 'X-Tenant')).toBe('acme')
      expect(header(a.headers, 'X-Service-Signature')).toBe(
        `sha256=${createHmac('sha256', hook.body.hmac_secret).update(a.rawBody).digest('hex')}`,
      )
    }
    const deliveries = await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { key })
    // DESIGN, "Webhook deliveries": each delivery with its attempts (status, response code, duration, error).
    expect(deliveries.body.data[0]).toMatchObject({ status: 'succeeded', attempt_count: 3 })
    expect(
      deliveries.body.data[0].attempts.map((a: { status: string; response_code: number }) => [
        a.status,
        a.response_code,
      ]),
    ).toEqual([
      ['failed', 500],
      ['failed', 302],
      ['succeeded', 204],
    ])
    for (const a of deliveries.body.data[0].attempts) expect(a.duration_ms).toEqual(expect.any(Number))
  })
})

describe('Form B deliveries', () => {
  it('GET /v1/webhooks/{id}/deliveries pages newest first with a keyset cursor, each delivery with its attempts (DESIGN, Webhook deliveries)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'paged', url: `${receiver.url}/paged`, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    const jobs = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [
        { name: 'p1.pdf', bytes: await invoicePdf() },
        { name: 'p2.pdf', bytes: await invoicePdf() },
        { name: 'p3.pdf', bytes: await invoicePdf() },
      ]),
    })
    expect(jobs.status).toBe(202)
    const everything = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=100`, { key }),
      (r) => r.body.data?.length === 3 && r.body.data.every((d: { status: string }) => d.status === 'succeeded'),
      60_000,
    )
    expect(everything.body.page).toEqual({ next_cursor: null, has_more: false })
    const newestFirst = everything.body.data.map((d: { created_at: string }) => d.created_at)
    expect([...newestFirst].sort().reverse()).toEqual(newestFirst)
    for (const d of everything.body.data) {
      expect(d).toMatchObject({ event: 'job.completed', attempt_count: 1, next_retry_at: null })
      expect(d.attempts).toEqual([
        expect.objectContaining({ attempt: 1, status: 'succeeded', response_code: 204, error: null }),
      ])
    }
    const first = await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=2`, { key })
    expect(first.body.data).toHaveLength(2)
    expect(first.body.page.has_more).toBe(true)
    const second = await call(
      stack.baseUrl,
      'GET',
      `/v1/webhooks/${hook.body.id}/deliveries?limit=2&cursor=${first.body.page.next_cursor}`,
      { key },
    )
    expect(second.body.data).toHaveLength(1)
    expect(second.body.page).toEqual({ next_cursor: null, has_more: false })
    expect([...first.body.data, ...second.body.data].map((d: { id: string }) => d.id)).toEqual(
      everything.body.data.map((d: { id: string }) => d.id),
    )
    const bad = await call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}/deliveries?cursor=nonsense`, { key })
    expect(bad.status).toBe(400)
  })

  it('persistent failure: first attempt + 8 retries, then the webhook is failing and admins are notified; PATCH re-enables', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: {
        name: 'down',
        url: `${receiver.url}/down`,
        events: ['job.completed'],
        auth: 'basic',
        basic: { username: 'u', password: 'p' },
      },
    })
    const job = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'b.pdf', bytes: await invoicePdf() }]),
    })
    const jobId = job.body[0].job_id
    const failing = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/webhooks/${hook.body.id}`, { key }),
      (r) => r.body.status === 'failing',
      60_000,
    )
    expect(failing.body.status).toBe('failing')
    const hits = receiver.received.filter((r) => r.path.endsWith('/down') && r.rawBody.toString().includes(jobId))
    expect(hits).toHaveLength(9)
    expect(header(hits[0]!.headers, 'Authorization')).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`)
    expect(new Set(hits.map((h) => JSON.parse(h.rawBody.toString()).delivery_id)).size).toBe(1)
    const notes = await call(stack.baseUrl, 'GET', `/admin/v1/workspaces/${workspaceId}/notifications`, { admin: true })
    expect(notes.body.data[0]).toMatchObject({ kind: 'webhook.failing' })
    const patched = await call(stack.baseUrl, 'PATCH', `/v1/webhooks/${hook.body.id}`, {
      key,
      json: { status: 'active' },
    })
    expect(patched.body.status).toBe('active')
  })
})

describe('deleting webhooks (DELETE /v1/webhooks/{id})', () => {
  it('204; the webhook is gone from reads, its name is free, another workspace or a key without the write scope cannot delete it', async () => {
    for (const form of ['A', 'B'] as const) {
      const { key } = await newWorkspace(stack.baseUrl, form)
      const other = await newWorkspace(stack.baseUrl, form)
      const readOnly = await newWorkspace(stack.baseUrl, form, { scopes: ['webhooks:read'] })
      const json =
        form === 'A' ? { name: 'del', url: receiver.url, auth_type: 'NONE' } : { name: 'del', url: receiver.url }
      const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', { key, json })
      expect(hook.status).toBe(201)
      const path = `/v1/webhooks/${hook.body.id}`
      expect((await call(stack.baseUrl, 'DELETE', path, { key: other.key })).status).toBe(404)
      const refused = await call(stack.baseUrl, 'DELETE', path, { key: readOnly.key })
      expect(refused.status).toBe(403)
      const deleted = await call(stack.baseUrl, 'DELETE', path, { key })
      expect(deleted.status).toBe(204)
      expect(deleted.body).toBeNull()
      for (const p of [path, `${path}/deliveries`]) {
        expect((await call(stack.baseUrl, 'GET', p, { key })).status).toBe(404)
      }
      expect((await call(stack.baseUrl, 'GET', '/v1/webhooks', { key })).body.page.total).toBe(0)
      expect((await call(stack.baseUrl, 'DELETE', path, { key })).status).toBe(404)
      expect((await call(stack.baseUrl, 'POST', '/v1/webhooks', { key, json })).status).toBe(201)
    }
  })

  it('Form A: retries already scheduled stop, and jobs of a pipeline still binding it deliver nothing to it', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A')
    const url = `${receiver.url}/deleted/down`
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'gone', url, auth_type: 'NONE' },
    })
    const pipelineId = await formAPipelineWith(key, hook.body.id)
    const submit = () =>
      call(stack.baseUrl, 'POST', '/v1/jobs', {
        key,
        form: fileForm('file', [{ name: 'a.pdf', bytes: invoice }], { pipeline_id: pipelineId }),
      })
    const invoice = await invoicePdf()
    const first = await submit()
    const toHook = () => receiver.received.filter((r) => r.path.endsWith('/deleted/down'))
    // Retried every 200 ms, doubling (the test stack's QUIRE_WEBHOOK_A_RETRY_BASE_MS): two attempts, then delete.
    await pollUntil(
      async () => toHook().filter((r) => r.rawBody.toString().includes(first.body.id)),
      (l) => l.length >= 2,
      60_000,
    )
    expect((await call(stack.baseUrl, 'DELETE', `/v1/webhooks/${hook.body.id}`, { key })).status).toBe(204)
    const sent = toHook().length
    const second = await submit()
    const done = await pollUntil(
      async () => (await call(stack.baseUrl, 'GET', `/v1/jobs/${second.body.id}`, { key })).body,
      (j) => j.status === 'completed',
      60_000,
    )
    expect(done.status).toBe('completed')
    // The next retries of the first job were due 0.8 and 1.6 s after its second attempt; give them 4 s.
    await new Promise((r) => setTimeout(r, 4_000))
    expect(toHook().length).toBeLessThanOrEqual(sent + 1) // one attempt may have been on the wire at the delete
    expect(toHook().filter((r) => r.rawBody.toString().includes(second.body.id))).toHaveLength(0)
  })
})
