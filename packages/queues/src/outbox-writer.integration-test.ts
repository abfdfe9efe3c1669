import { randomBytes } from 'node:crypto'
import { createPrisma, type Db, type Tx } from '@quire/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeliveryPayload, FanoutPayload, PRIORITY, StageJobPayload } from './catalog.ts'
import { outbox } from './outbox-writer.ts'

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!)
})
afterAll(async () => db.$disconnect())

const unique = () => randomBytes(6).toString('hex')
const rowsFor = (jobKeys: string[]) =>
  db.outboxMessage.findMany({
    where: { jobKey: { in: jobKeys } },
    select: { queue: true, name: true, jobKey: true, payload: true, priority: true, delayMs: true },
    orderBy: { id: 'asc' },
  })

describe('typed outbox writers (queue catalog)', () => {
  it('write the queue, job name, deterministic id and payload the catalog declares, which the consumer parses', async () => {
    const jobId = `job_${unique()}`
    const deliveryId = `dlv_${unique()}`
    const events = [`evt_${unique()}`, `evt_${unique()}`]
    await db.$transaction(async (tx) => {
      await outbox.stage(tx, { stage: 'split_classify', jobId }, { priority: 'high' })
      await outbox.delivery(tx, { deliveryId, attempt: 3 }, { delayMs: 60_000 })
      await outbox.fanout(
        tx,
        events.map((eventId) => ({ eventId })),
      )
    })
    const rows = await rowsFor([`${jobId}.split_classify`, `${deliveryId}.a3`, ...events.map((e) => `fanout.${e}`)])
    expect(rows).toEqual([
      {
        queue: 'stage-split_classify',
        name: 'split_classify',
        jobKey: `${jobId}.split_classify`,
        payload: { jobId },
        priority: PRIORITY.high,
        delayMs: null,
      },
      {
        queue: 'webhook-delivery',
        name: 'deliver',
        jobKey: `${deliveryId}.a3`,
        payload: { deliveryId, attempt: 3 },
        priority: null,
        delayMs: 60_000,
      },
      ...events.map((eventId) => ({
        queue: 'webhook-fanout',
        name: 'fanout',
        jobKey: `fanout.${eventId}`,
        payload: { eventId },
        priority: null,
        delayMs: null,
      })),
    ])
    // What the producer wrote is what each consumer's schema accepts.
    expect(StageJobPayload.parse(rows[0]?.payload)).toEqual({ jobId })
    expect(DeliveryPayload.parse(rows[1]?.payload)).toEqual({ deliveryId, attempt: 3 })
    expect(FanoutPayload.parse(rows[2]?.payload)).toEqual({ eventId: events[0] })
  })

  it('refuses, at the producer, a value the consumer would refuse, and the transaction writes nothing', async () => {
    const deliveryId = `dlv_${unique()}`
    await expect(
      db.$transaction(async (tx) => {
        await outbox.fanout(tx, { eventId: `evt_${unique()}` })
        await outbox.delivery(tx, { deliveryId, attempt: 0 })
      }),
    ).rejects.toThrow(/attempt/)
    await expect(db.$transaction((tx) => outbox.stage(tx, { stage: 'parse', jobId: '' }))).rejects.toThrow(/jobId/)
    expect(await rowsFor([`${deliveryId}.a0`, '.parse'])).toEqual([])
  })

  it('writes nothing for an empty batch', async () => {
    const before = await db.outboxMessage.count()
    await db.$transaction((tx) => outbox.fanout(tx, []))
    expect(await db.outboxMessage.count()).toBe(before)
  })
})

// Compile-time checks (`npm run typecheck`): each line must stay an error, or tsc reports an unused directive.
export function wrongPayloadsDoNotCompile(tx: Tx) {
  // @ts-expect-error `source` runs inside the request; it has no queue.
  void outbox.stage(tx, { stage: 'source', jobId: 'j' })
  // @ts-expect-error a delivery names its attempt.
  void outbox.delivery(tx, { deliveryId: 'd' })
  // @ts-expect-error payloads carry ids only.
  void outbox.fanout(tx, { eventId: 'e', body: '{}' })
  // @ts-expect-error priorities are named, not numbers.
  void outbox.stage(tx, { stage: 'parse', jobId: 'j' }, { priority: 1 })
}
