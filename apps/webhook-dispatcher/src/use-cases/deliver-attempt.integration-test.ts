// deliverAttempt on real PostgreSQL rows, a real local HTTPS receiver and the real guarded undici dispatcher.
// Nothing is mocked: the only boundary (the receiver) is a real server, reached by injection (the dispatcher trusts its
// CA). Expected delays are written out as numbers here, not asked of the profile, so a wrong policy fails.
import { createWebhook, createWorkspace, deleteWebhook, recordEvents, type WebhookAuth } from '@quire/core'
import { createPrisma, type Db } from '@quire/db'
import { ephemeralSecretBox } from '@quire/secrets'
import type { ApiForm, RetrySettings } from '@quire/forms'
import { DELIVERY_QUEUE } from '@quire/queues'
import { verifyFormA, verifyFormB } from '@quire/signing'
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '@quire/testing'
import { createGuardedDispatcher } from '@quire/webhooks'
import pino from 'pino'
import type { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type DeliveryDeps, deliverAttempt } from './deliver-attempt.ts'
import { recordSuccesses } from './delivery-rows.ts'

// Form A: 1 s doubling, at most 3 attempts, none later than 1 h after the first. Form B: two retries, 5 s then 20 s.
const RETRY: RetrySettings = {
  doubling: { baseMs: 1_000, maxAttempts: 3, giveUpMs: 3_600_000 },
  schedule: [5_000, 20_000],
}
// Bytes a re-serialisation would change (12.50, the \u escape, the spacing, non-ASCII in several scripts).
const BODY = '{"type":"job.completed", "data":{"total":12.50,"vendor":"Müller & Søn — 請求書","note":"caf\\u00e9"}}'

let db: Db
let receiver: HttpsReceiver
let dispatcher: Agent
const log = pino({ level: 'silent' })
// Webhook secrets and credentials are stored sealed; createWebhook seals and deliverAttempt opens with this box.
const secrets = ephemeralSecretBox()

beforeAll(async () => {
  db = createPrisma(process.env.DATABASE_URL!)
  // Paths decide the answer: /ok → 200 after 30 ms, /fail → 503, /redirect → 302 to /redirected (never followed),
  // /slow-ok and /slow-fail → 200 and 503 after 400 ms (time for a test to delete the webhook meanwhile).
  receiver = await startHttpsReceiver({
    respond: ({ path }) => {
      if (path.endsWith('/ok')) return { status: 200, delayMs: 30 }
      if (path.endsWith('/slow-ok')) return { status: 200, delayMs: 400 }
      if (path.endsWith('/slow-fail')) return { status: 503, delayMs: 400 }
      if (path.endsWith('/redirect')) return { status: 302, headers: { Location: `${receiver.origin}/redirected` } }
      return { status: 503, body: 'down' }
    },
  })
  dispatcher = createGuardedDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000, ca: receiver.ca })
})
afterAll(async () => {
  await dispatcher?.close()
  await receiver?.close()
  await db?.$disconnect()
})

function depsWith(onCommit = vi.fn()): DeliveryDeps & { onCommit: ReturnType<typeof vi.fn> } {
  return { db, secrets, log, dispatcher, timeoutMs: 5_000, connectTimeoutMs: 5_000, retry: RETRY, onCommit }
}

type Setup = {
  form: ApiForm
  path: 'ok' | 'fail' | 'redirect' | 'slow-ok' | 'slow-fail'
  auth?: WebhookAuth
  headers?: Record<string, string>
  /** When the delivery (and so its first attempt) was created; default now. */
  createdAt?: Date
}

/** A workspace of the form, one webhook on the receiver, a recorded event and the delivery fan-out would store. */
async function setUp(s: Setup) {
  const ws = await createWorkspace({ db, name: `deliver-attempt ${s.form}`, apiForm: s.form })
  const webhook = await createWebhook({
    db,
    secrets,
    workspaceId: ws.id,
    name: `hook-${s.path}`,
    url: `${receiver.url}/${s.path}`,
    auth: s.auth ?? { type: 'none' },
    events: [],
    headers: s.headers ?? {},
    urlPolicy: { allowPrivate: true, allowInsecure: false },
  })
  const [eventId] = await db.$transaction((tx) => recordEvents(tx, [{ workspaceId: ws.id, type: 'job.finished' }]))
  const deliveryId = `dlv_${Math.random().toString(36).slice(2, 14)}`
  await db.webhookDelivery.create({
    data: {
      id: deliveryId,
      webhookId: webhook.id,
      eventId: eventId!,
      eventType: 'job.completed',
      body: BODY,
      ...(s.createdAt ? { createdAt: s.createdAt } : {}),
    },
  })
  return { workspaceId: ws.id, webhook, deliveryId }
}

const requestsFor = (deliveryId: string) =>
  receiver.received.filter((r) => header(r, 'x-service-delivery-id') === deliveryId)

function header(r: ReceivedRequest, name: string): string | undefined {
  const v = r.headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}

/** Everything deliverAttempt writes for a delivery, to show a skipped call writes nothing. */
async function stored(deliveryId: string) {
  const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })
  const attempts = await db.deliveryAttempt.findMany({ where: { deliveryId }, orderBy: { attempt: 'asc' } })
  const queued = await db.outboxMessage.findMany({
    where: { queue: DELIVERY_QUEUE, jobKey: { startsWith: `${deliveryId}.` } },
    orderBy: { id: 'asc' },
  })
  return { delivery, attempts, queued }
}

/** Calls one attempt and checks `nextAttemptAt` is `delayMs` after the moment the outcome was recorded. */
async function failingAttempt(deps: DeliveryDeps, deliveryId: string, attempt: number, delayMs: number) {
  const before = Date.now()
  expect(await deliverAttempt(deps, { deliveryId, attempt })).toBe('retrying')
  const after = Date.now()
  const { delivery, queued } = await stored(deliveryId)
  expect(delivery).toMatchObject({ status: 'pending', attempts: attempt, completedAt: null })
  expect(delivery.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before + delayMs)
  expect(delivery.nextAttemptAt!.getTime()).toBeLessThanOrEqual(after + delayMs)
  const next = queued.filter((m) => m.jobKey === `${deliveryId}.a${attempt + 1}`)
  expect(next).toHaveLength(1)
  expect(next[0]).toMatchObject({
    queue: DELIVERY_QUEUE,
    payload: { deliveryId, attempt: attempt + 1 },
    delayMs,
    dispatchedAt: null,
  })
}

type FormCase = {
  form: ApiForm
  /** The waits RETRY gives after attempt 1 and attempt 2 fail. */
  delays: [number, number]
  verifies: (secret: string, r: ReceivedRequest) => boolean
}

const FORMS: FormCase[] = [
  {
    form: 'A',
    delays: [1_000, 2_000],
    verifies: (secret, r) => {
      // Form A signs the body alone: no timestamp header.
      expect(header(r, 'x-service-timestamp')).toBeUndefined()
      return verifyFormA({ secret, rawBody: r.rawBody, signature: header(r, 'x-service-signature') })
    },
  },
  {
    form: 'B',
    delays: [5_000, 20_000],
    verifies: (secret, r) => {
      const ts = Number(header(r, 'x-service-timestamp'))
      expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(10)
      const result = verifyFormB({
        secret,
        rawBody: r.rawBody,
        signature: header(r, 'x-service-signature'),
        timestamp: header(r, 'x-service-timestamp'),
      })
      return result.ok
    },
  },
]

describe.each(FORMS)('deliverAttempt, Form $form', ({ form, delays, verifies }) => {
  it('a 2xx marks the delivery succeeded, logs one attempt and queues nothing; the receiver gets the stored body, signed', async () => {
    const { webhook, deliveryId } = await setUp({
      form,
      path: 'ok',
      auth: { type: 'api_key', headerName: 'X-Receiver-Key', key: 'receiver-key' },
      headers: { 'X-Tenant': 'acme' },
    })
    const deps = depsWith()
    expect(await deliverAttempt(deps, { deliveryId, attempt: 1 })).toBe('succeeded')

    const { delivery, attempts, queued } = await stored(deliveryId)
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, nextAttemptAt: null })
    expect(delivery.completedAt).toBeInstanceOf(Date)
    expect(attempts).toHaveLength(1)
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 200, error: null })
    // The receiver held its answer for 30 ms; the duration is measured, not made up.
    expect(attempts[0]!.durationMs).toBeGreaterThanOrEqual(25)
    expect(attempts[0]!.durationMs).toBeLessThan(5_000)
    expect(queued).toEqual([])
    expect(deps.onCommit).not.toHaveBeenCalled()

    const got = requestsFor(deliveryId)
    expect(got).toHaveLength(1)
    const r = got[0]!
    expect(r.method).toBe('POST')
    expect(r.path).toBe('/hook/ok')
    expect(r.rawBody.equals(Buffer.from(BODY, 'utf8'))).toBe(true)
    expect(header(r, 'content-type')).toBe('application/json')
    expect(header(r, 'user-agent')).toBe('Service-Webhook/1.0')
    expect(header(r, 'x-receiver-key')).toBe('receiver-key')
    expect(header(r, 'x-tenant')).toBe('acme')
    expect(verifies(webhook.secret, r)).toBe(true)
    // …and with any other secret it does not verify.
    expect(verifies(`${webhook.secret}x`, r)).toBe(false)

    // Done is done: the same attempt again is skipped and sends nothing.
    expect(await deliverAttempt(deps, { deliveryId, attempt: 1 })).toBe('skipped')
    expect(requestsFor(deliveryId)).toHaveLength(1)
  })

  it('sends basic credentials as Authorization: Basic', async () => {
    const { deliveryId } = await setUp({ form, path: 'ok', auth: { type: 'basic', username: 'u', password: 'p:w' } })
    expect(await deliverAttempt(depsWith(), { deliveryId, attempt: 1 })).toBe('succeeded')
    const [r] = requestsFor(deliveryId)
    expect(header(r!, 'authorization')).toBe(`Basic ${Buffer.from('u:p:w').toString('base64')}`)
  })

  it(`a non-2xx is recorded and attempt n+1 is queued through the outbox after the form's wait (${delays.join(', ')} ms); a repeat is skipped`, async () => {
    const { webhook, deliveryId } = await setUp({ form, path: 'fail' })
    const deps = depsWith()

    await failingAttempt(deps, deliveryId, 1, delays[0])
    expect(deps.onCommit).toHaveBeenCalledTimes(1)
    const afterFirst = await stored(deliveryId)
    expect(afterFirst.attempts).toHaveLength(1)
    expect(afterFirst.attempts[0]).toMatchObject({ attempt: 1, statusCode: 503 })
    expect(afterFirst.attempts[0]!.error).toMatch(/^http_status: .*503/)

    // The same attempt again (a redelivered queue job): skipped, nothing sent, nothing written.
    expect(await deliverAttempt(deps, { deliveryId, attempt: 1 })).toBe('skipped')
    expect(await stored(deliveryId)).toEqual(afterFirst)
    expect(requestsFor(deliveryId)).toHaveLength(1)
    expect(deps.onCommit).toHaveBeenCalledTimes(1)

    await failingAttempt(deps, deliveryId, 2, delays[1])
    const { attempts, queued } = await stored(deliveryId)
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2])
    expect(queued.map((m) => m.jobKey)).toEqual([`${deliveryId}.a2`, `${deliveryId}.a3`])

    // Every attempt resends the stored body with the same delivery id, signed for this webhook.
    const got = requestsFor(deliveryId)
    expect(got).toHaveLength(2)
    for (const r of got) {
      expect(r.rawBody.equals(Buffer.from(BODY, 'utf8'))).toBe(true)
      expect(verifies(webhook.secret, r)).toBe(true)
    }
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'active' })
  })

  it('a 3xx is a failure, not followed: recorded with its status and retried', async () => {
    const { deliveryId } = await setUp({ form, path: 'redirect' })
    await failingAttempt(depsWith(), deliveryId, 1, delays[0])
    const { attempts } = await stored(deliveryId)
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 302 })
    expect(attempts[0]!.error).toMatch(/^redirect: /)
    expect(requestsFor(deliveryId)).toHaveLength(1)
    expect(receiver.received.filter((r) => r.path === '/redirected')).toEqual([])
  })
})

describe('deliverAttempt abandons, Form A', () => {
  it('after max attempts: abandoned, nothing more queued, the webhook stays active and nobody is notified', async () => {
    const { workspaceId, webhook, deliveryId } = await setUp({ form: 'A', path: 'fail' })
    const deps = depsWith()
    await failingAttempt(deps, deliveryId, 1, 1_000)
    await failingAttempt(deps, deliveryId, 2, 2_000)
    expect(await deliverAttempt(deps, { deliveryId, attempt: 3 })).toBe('abandoned')

    const { delivery, attempts, queued } = await stored(deliveryId)
    expect(delivery).toMatchObject({ status: 'abandoned', attempts: 3, nextAttemptAt: null })
    expect(delivery.completedAt).toBeInstanceOf(Date)
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
    ])
    expect(queued.map((m) => m.jobKey)).toEqual([`${deliveryId}.a2`, `${deliveryId}.a3`])
    expect(deps.onCommit).toHaveBeenCalledTimes(2)
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'active' })
    expect(await db.notification.count({ where: { workspaceId } })).toBe(0)

    expect(await deliverAttempt(deps, { deliveryId, attempt: 4 })).toBe('skipped')
    expect(requestsFor(deliveryId)).toHaveLength(3)
  })

  it('when the next attempt would start after the give-up window: abandoned at the first failure', async () => {
    // First attempt 59 min 59.5 s ago: the 1 s wait would end past the 1 h window.
    const createdAt = new Date(Date.now() - 3_599_500)
    const { workspaceId, webhook, deliveryId } = await setUp({ form: 'A', path: 'fail', createdAt })
    expect(await deliverAttempt(depsWith(), { deliveryId, attempt: 1 })).toBe('abandoned')
    const { delivery, attempts, queued } = await stored(deliveryId)
    expect(delivery).toMatchObject({ status: 'abandoned', attempts: 1, nextAttemptAt: null })
    expect(attempts).toHaveLength(1)
    expect(queued).toEqual([])
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'active' })
    expect(await db.notification.count({ where: { workspaceId } })).toBe(0)
  })

  it('inside the window the same failure is retried (the window, not the age alone, decides)', async () => {
    const createdAt = new Date(Date.now() - 3_500_000)
    const { deliveryId } = await setUp({ form: 'A', path: 'fail', createdAt })
    await failingAttempt(depsWith(), deliveryId, 1, 1_000)
  })
})

describe('deliverAttempt abandons, Form B', () => {
  it('when the schedule is spent: abandoned, the webhook is failing and the workspace gets one notification naming it', async () => {
    const { workspaceId, webhook, deliveryId } = await setUp({ form: 'B', path: 'fail' })
    const deps = depsWith()
    await failingAttempt(deps, deliveryId, 1, 5_000)
    await failingAttempt(deps, deliveryId, 2, 20_000)
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'active' })
    expect(await deliverAttempt(deps, { deliveryId, attempt: 3 })).toBe('abandoned')

    const { delivery, attempts, queued } = await stored(deliveryId)
    expect(delivery).toMatchObject({ status: 'abandoned', attempts: 3, nextAttemptAt: null })
    expect(delivery.completedAt).toBeInstanceOf(Date)
    expect(attempts).toHaveLength(3)
    expect(queued.map((m) => m.jobKey)).toEqual([`${deliveryId}.a2`, `${deliveryId}.a3`])
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'failing' })

    const notes = await db.notification.findMany({ where: { workspaceId } })
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatchObject({
      kind: 'webhook.failing',
      data: { webhook_id: webhook.id, delivery_id: deliveryId, last_status: 503 },
    })
    expect(notes[0]!.message).toContain(webhook.name)
    expect(notes[0]!.message).toContain(webhook.url)

    // A redelivered last attempt changes nothing and notifies nobody twice.
    expect(await deliverAttempt(deps, { deliveryId, attempt: 3 })).toBe('skipped')
    expect(await db.notification.count({ where: { workspaceId } })).toBe(1)
  })

  it('once failing, the webhook receives nothing: its other pending deliveries end unsent, and nobody is told twice', async () => {
    const { workspaceId, webhook, deliveryId } = await setUp({ form: 'B', path: 'fail' })
    // A second and third delivery to the same webhook, fanned out before it failed.
    const others: string[] = []
    for (let i = 0; i < 2; i++) {
      const [eventId] = await db.$transaction((tx) => recordEvents(tx, [{ workspaceId, type: 'job.finished' }]))
      const id = `dlv_${Math.random().toString(36).slice(2, 14)}`
      await db.webhookDelivery.create({
        data: { id, webhookId: webhook.id, eventId: eventId!, eventType: 'job.completed', body: BODY },
      })
      others.push(id)
    }
    const deps = depsWith()
    await failingAttempt(deps, deliveryId, 1, 5_000)
    await failingAttempt(deps, deliveryId, 2, 20_000)
    await failingAttempt(deps, others[0]!, 1, 5_000)
    await failingAttempt(deps, others[0]!, 2, 20_000)
    // Both reach the end of the schedule at the same moment: one change to failing, one notification.
    expect(
      await Promise.all([
        deliverAttempt(deps, { deliveryId, attempt: 3 }),
        deliverAttempt(deps, { deliveryId: others[0]!, attempt: 3 }),
      ]),
    ).toEqual(['abandoned', 'abandoned'])
    expect(await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ status: 'failing' })
    expect(await db.notification.count({ where: { workspaceId } })).toBe(1)

    // The third delivery's attempt comes due: nothing is posted, it ends abandoned, still one notification.
    const posted = requestsFor(others[1]!).length
    expect(await deliverAttempt(deps, { deliveryId: others[1]!, attempt: 1 })).toBe('abandoned')
    expect(requestsFor(others[1]!)).toHaveLength(posted)
    const { delivery, attempts } = await stored(others[1]!)
    expect(delivery).toMatchObject({ status: 'abandoned', nextAttemptAt: null })
    expect(attempts).toEqual([])
    expect(await db.notification.count({ where: { workspaceId } })).toBe(1)
  })

  it('an old delivery is still retried while the schedule lasts (no give-up window in Form B)', async () => {
    const createdAt = new Date(Date.now() - 7 * 24 * 3_600_000)
    const { deliveryId } = await setUp({ form: 'B', path: 'fail', createdAt })
    await failingAttempt(depsWith(), deliveryId, 1, 5_000)
  })
})

describe('a webhook deleted while its delivery is under way', () => {
  for (const path of ['slow-ok', 'slow-fail'] as const) {
    it(`the attempt answered ${path === 'slow-ok' ? '200' : '503'} records nothing and is skipped, without an error`, async () => {
      const { workspaceId, webhook, deliveryId } = await setUp({ form: 'B', path })
      const attempt = deliverAttempt(depsWith(), { deliveryId, attempt: 1 })
      await vi.waitFor(() => expect(requestsFor(deliveryId)).toHaveLength(1), { timeout: 5_000 })
      await deleteWebhook({ db, workspaceId, webhookId: webhook.id })
      expect(await attempt).toBe('skipped')
      expect(await db.webhookDelivery.count({ where: { id: deliveryId } })).toBe(0)
      expect(await db.deliveryAttempt.count({ where: { deliveryId } })).toBe(0)
    })
  }

  it('a batch of successes with one delivery gone records the others', async () => {
    const kept = await setUp({ form: 'A', path: 'ok' })
    const gone = await setUp({ form: 'A', path: 'ok' })
    await deleteWebhook({ db, workspaceId: gone.workspaceId, webhookId: gone.webhook.id })
    const at = new Date()
    const recorded = await recordSuccesses(db, [
      { deliveryId: gone.deliveryId, attempt: 1, statusCode: 200, durationMs: 5, at },
      { deliveryId: kept.deliveryId, attempt: 1, statusCode: 200, durationMs: 5, at },
    ])
    expect([...recorded]).toEqual([kept.deliveryId])
    expect((await stored(kept.deliveryId)).delivery.status).toBe('succeeded')
  })
})
