// Fan-out and the first attempts as one queue job, on real PostgreSQL rows and a real local HTTPS receiver.
import { createWebhook, createWorkspace, recordEvents } from '@quire/core'
import { createPrisma, type Db } from '@quire/db'
import { DELIVERY_QUEUE, DeliveryPayload, deliveryIdsOf } from '@quire/queues'
import { ephemeralSecretBox } from '@quire/secrets'
import { verifyFormB } from '@quire/signing'
import { type HttpsReceiver, startHttpsReceiver } from '@quire/testing'
import { createGuardedDispatcher } from '@quire/webhooks'
import type { Job } from 'bullmq'
import pino from 'pino'
import type { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { limitConcurrency } from '../batching/limit-concurrency.ts'
import { createDeliveryProcessor } from '../processors/deliver-webhook.processor.ts'
import { createDeliveryBatching } from './delivery-rows.ts'
import { fanoutEvents } from './fanout-event.ts'

let db: Db
let receiver: HttpsReceiver
let dispatcher: Agent
const secrets = ephemeralSecretBox()

beforeAll(async () => {
  db = createPrisma(process.env.DATABASE_URL!)
  receiver = await startHttpsReceiver()
  dispatcher = createGuardedDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000, ca: receiver.ca })
})
afterAll(async () => {
  await dispatcher?.close()
  await receiver?.close()
  await db?.$disconnect()
})

async function workspaceWithHooks(n: number) {
  const ws = await createWorkspace({ db, name: 'fanout', apiForm: 'B' })
  const hooks = []
  for (let i = 0; i < n; i++) {
    hooks.push(
      await createWebhook({
        db,
        secrets,
        workspaceId: ws.id,
        name: `hook-${i}`,
        url: `${receiver.url}/${i}`,
        auth: { type: 'none' },
        events: ['pipeline.deployed'],
        headers: {},
        urlPolicy: { allowPrivate: true, allowInsecure: false },
      }),
    )
  }
  return { workspaceId: ws.id, hooks }
}

describe('fan-out', () => {
  it("a batch of events becomes each webhook's deliveries and one first-attempt job; a repeat makes nothing", async () => {
    const { workspaceId, hooks } = await workspaceWithHooks(2)
    const eventIds = await db.$transaction((tx) =>
      recordEvents(
        tx,
        [1, 2, 3].map((version) => ({
          workspaceId,
          type: 'pipeline.deployed' as const,
          data: { pipeline_id: 'ppl_x', version },
        })),
      ),
    )
    const deps = { db, publicUrl: 'http://127.0.0.1:3000' }
    const first = await fanoutEvents(deps, eventIds)
    expect(eventIds.map((id) => first.deliveries.get(id))).toEqual([2, 2, 2])
    const deliveries = await db.webhookDelivery.findMany({ where: { eventId: { in: eventIds } } })
    expect(deliveries).toHaveLength(6)
    expect(await db.event.count({ where: { id: { in: eventIds }, fannedOutAt: null } })).toBe(0)
    expect(first.outboxRows).toHaveLength(1)
    const [row] = first.outboxRows
    expect(row).toMatchObject({ queue: DELIVERY_QUEUE, name: 'deliver', delay_ms: null })
    const payload = DeliveryPayload.parse(row!.payload)
    expect(payload.attempt).toBe(1)
    expect(new Set(deliveryIdsOf(payload))).toEqual(new Set(deliveries.map((d) => d.id)))

    const again = await fanoutEvents(deps, eventIds)
    expect([...again.deliveries.values()]).toEqual([0, 0, 0])
    expect(again.outboxRows).toEqual([])
    expect(await db.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(6)

    // The group job delivers each one under its own id, signed for its webhook, and records each.
    const process = createDeliveryProcessor({
      db,
      secrets,
      log: pino({ level: 'silent' }),
      dispatcher,
      timeoutMs: 5_000,
      connectTimeoutMs: 5_000,
      retry: { doubling: { baseMs: 1_000, maxAttempts: 3, giveUpMs: 3_600_000 }, schedule: [5_000] },
      batching: createDeliveryBatching(db),
      inFlight: limitConcurrency(2),
    })
    expect(await process({ data: row!.payload } as Job)).toEqual({ succeeded: 6 })
    const done = await db.webhookDelivery.findMany({ where: { eventId: { in: eventIds } } })
    expect(done.every((d) => d.status === 'succeeded' && d.attempts === 1)).toBe(true)
    expect(await db.deliveryAttempt.count({ where: { deliveryId: { in: done.map((d) => d.id) } } })).toBe(6)
    for (const d of done) {
      const got = receiver.received.filter((r) => r.headers['x-service-delivery-id'] === d.id)
      expect(got).toHaveLength(1)
      const hook = hooks.find((h) => h.id === d.webhookId)!
      expect(got[0]!.path).toBe(`/hook/${hooks.indexOf(hook)}`)
      const verified = verifyFormB({
        secret: hook.secret,
        rawBody: got[0]!.rawBody,
        signature: got[0]!.headers['x-service-signature'] as string,
        timestamp: got[0]!.headers['x-service-timestamp'] as string,
      })
      expect(verified).toEqual({ ok: true })
    }
    // A redelivered group job (a crash before BullMQ heard it finished) sends nothing twice.
    expect(await process({ data: row!.payload } as Job)).toEqual({ skipped: 6 })
    expect(receiver.received).toHaveLength(6)
  })

  it('a large fan-out goes out as jobs of at most 100 deliveries; an event whose workspace is gone is marked, no deliveries', async () => {
    const { workspaceId } = await workspaceWithHooks(3)
    const eventIds = await db.$transaction((tx) =>
      recordEvents(
        tx,
        Array.from({ length: 45 }, (_, i) => ({
          workspaceId,
          type: 'pipeline.deployed' as const,
          data: { pipeline_id: 'ppl_x', version: i + 1 },
        })),
      ),
    )
    const orphan = await db.$transaction((tx) =>
      recordEvents(tx, [
        { workspaceId: 'ws_gone', type: 'pipeline.deployed' as const, data: { pipeline_id: 'ppl_x', version: 1 } },
      ]),
    )
    const out = await fanoutEvents({ db, publicUrl: 'http://127.0.0.1:3000' }, [...eventIds, ...orphan])
    expect(eventIds.every((id) => out.deliveries.get(id) === 3)).toBe(true)
    expect(out.deliveries.get(orphan[0]!)).toBe(0)
    const groups = out.outboxRows.map((r) => deliveryIdsOf(DeliveryPayload.parse(r.payload)))
    expect(groups.map((g) => g.length)).toEqual([100, 35])
    const stored = await db.webhookDelivery.findMany({ where: { eventId: { in: eventIds } }, select: { id: true } })
    expect(new Set(groups.flat())).toEqual(new Set(stored.map((d) => d.id)))
    expect(await db.event.count({ where: { id: { in: [...eventIds, ...orphan] }, fannedOutAt: null } })).toBe(0)
  })

  it('first attempts the caller sends itself are written with dispatch_after, so the relay leaves them alone until then', async () => {
    const { workspaceId } = await workspaceWithHooks(1)
    const eventIds = await db.$transaction((tx) =>
      recordEvents(tx, [
        { workspaceId, type: 'pipeline.deployed' as const, data: { pipeline_id: 'ppl_x', version: 1 } },
      ]),
    )
    const out = await fanoutEvents({ db, publicUrl: 'http://127.0.0.1:3000', directGraceMs: 5_000 }, eventIds)
    expect(out.outboxRows).toHaveLength(1)
    const [row] = await db.$queryRaw<{ created_at: Date; dispatch_after: Date | null; dispatched_at: Date | null }[]>`
      SELECT created_at, dispatch_after, dispatched_at FROM outbox WHERE id = ${out.outboxRows[0]!.id}`
    expect(row!.dispatched_at).toBeNull()
    expect(row!.dispatch_after!.getTime() - row!.created_at.getTime()).toBe(5_000)
    // Without a grace, as before: the relay sends the rows at its next pass.
    const plain = await db.$transaction((tx) =>
      recordEvents(tx, [
        { workspaceId, type: 'pipeline.deployed' as const, data: { pipeline_id: 'ppl_x', version: 2 } },
      ]),
    )
    const relayed = await fanoutEvents({ db, publicUrl: 'http://127.0.0.1:3000' }, plain)
    const [plainRow] = await db.$queryRaw<{ dispatch_after: Date | null }[]>`
      SELECT dispatch_after FROM outbox WHERE id = ${relayed.outboxRows[0]!.id}`
    expect(plainRow!.dispatch_after).toBeNull()
  })
})
