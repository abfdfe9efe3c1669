import { randomBytes } from 'node:crypto'
import { createPrisma, type Db, parseDatabaseUrl, type Tx } from '@quire/db'
import { waitFor } from '@quire/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeliveryPayload, FanoutPayload, fanoutEventIds, PRIORITY, QUEUE_CATALOG, StageJobPayload } from './catalog.ts'
import { OUTBOX_CHANNEL, outbox } from './outbox-writer.ts'

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
    const fanoutKey = QUEUE_CATALOG.fanout.address({ eventIds: events }).jobKey
    expect(fanoutKey).toMatch(new RegExp(`^fanout\\.${events[0]}\\.[0-9a-f]{16}$`))
    const rows = await rowsFor([`${jobId}.split_classify`, `${deliveryId}.a3`, fanoutKey])
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
      // The events of one write are fanned out by one job.
      {
        queue: 'webhook-fanout',
        name: 'fanout',
        jobKey: fanoutKey,
        payload: { eventIds: events },
        priority: null,
        delayMs: null,
      },
    ])
    // What the producer wrote is what each consumer's schema accepts.
    expect(StageJobPayload.parse(rows[0]?.payload)).toEqual({ jobId })
    expect(DeliveryPayload.parse(rows[1]?.payload)).toEqual({ deliveryId, attempt: 3 })
    expect(fanoutEventIds(FanoutPayload.parse(rows[2]?.payload))).toEqual(events)
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

  it('groups a write of many events into fan-out jobs of at most 100 events, in order', async () => {
    const events = Array.from({ length: 150 }, () => `evt_${unique()}`)
    await db.$transaction((tx) =>
      outbox.fanout(
        tx,
        events.map((eventId) => ({ eventId })),
      ),
    )
    const keys = [events.slice(0, 100), events.slice(100)].map(
      (eventIds) => QUEUE_CATALOG.fanout.address({ eventIds }).jobKey,
    )
    const rows = await rowsFor(keys)
    expect(rows.map((r) => fanoutEventIds(FanoutPayload.parse(r.payload)))).toEqual([
      events.slice(0, 100),
      events.slice(100),
    ])
  })

  it('notifies listeners when the write commits, and not when it rolls back', async () => {
    const listener = new pg.Client({ connectionString: parseDatabaseUrl(process.env.DATABASE_URL!).connectionString })
    await listener.connect()
    const heard: string[] = []
    listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`))
    await listener.query(`LISTEN ${OUTBOX_CHANNEL}`)
    try {
      await expect(
        db.$transaction(async (tx) => {
          await outbox.fanout(tx, { eventId: `evt_${unique()}` })
          throw new Error('roll back')
        }),
      ).rejects.toThrow('roll back')
      await db.$transaction(async (tx) => {
        await outbox.delivery(tx, { deliveryId: `dlv_${unique()}`, attempt: 2 })
        await outbox.delivery(tx, { deliveryId: `dlv_${unique()}`, attempt: 2 })
      })
      await waitFor(() => heard.length > 0 || undefined, { timeoutMs: 5000, message: 'no notification' })
      await new Promise((r) => setTimeout(r, 100))
      // One notification per queue and transaction; none for the rolled-back write.
      expect(heard).toEqual([`${OUTBOX_CHANNEL}:webhook-delivery`])
    } finally {
      await listener.end()
    }
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
