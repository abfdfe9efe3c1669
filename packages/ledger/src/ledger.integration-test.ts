import { createPrisma, type Db } from '@quire/db'
import { newId } from '@quire/domain'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getBalance, grantCredits, reserveCredits, settleCredits, voidCredits } from './ledger.ts'

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!)
})
afterAll(async () => db.$disconnect())

async function workspace(credits: number, spendingCap: number | null = null) {
  const id = newId('ws')
  await db.workspace.create({ data: { id, name: id, apiForm: 'B', spendingCap } })
  if (credits) await db.$transaction((tx) => grantCredits(tx, { workspaceId: id, amount: credits }))
  return id
}

const reserve = (workspaceId: string, amount: number, jobId = newId('job')) =>
  db.$transaction((tx) => reserveCredits(tx, { workspaceId, jobId, amount })).then((r) => ({ ...r, jobId }))

describe('ledger on real PostgreSQL', () => {
  it('reserve holds credits, settle posts at most the hold and releases the rest, exactly once', async () => {
    const ws = await workspace(10)
    const r = await reserve(ws, 4)
    expect(r.ok).toBe(true)
    expect(await getBalance(db, ws)).toMatchObject({ available: 6, reserved: 4, spent: 0 })
    const first = await db.$transaction((tx) => settleCredits(tx, { jobId: r.jobId, used: 9 }))
    expect(first).toEqual({ posted: 4 })
    const again = await db.$transaction((tx) => settleCredits(tx, { jobId: r.jobId, used: 1 }))
    expect(again).toBeNull()
    expect(await getBalance(db, ws)).toMatchObject({ available: 6, reserved: 0, spent: 4 })
  })

  it('void releases the whole hold once; settling a voided hold does nothing', async () => {
    const ws = await workspace(5)
    const r = await reserve(ws, 5)
    await db.$transaction((tx) => voidCredits(tx, { jobId: r.jobId }))
    await db.$transaction((tx) => voidCredits(tx, { jobId: r.jobId }))
    expect(await db.$transaction((tx) => settleCredits(tx, { jobId: r.jobId, used: 5 }))).toBeNull()
    expect(await getBalance(db, ws)).toMatchObject({ available: 5, reserved: 0, spent: 0 })
  })

  it('refuses a reservation larger than the balance', async () => {
    const ws = await workspace(3)
    expect(await reserve(ws, 4)).toMatchObject({ ok: false, reason: 'insufficient_credits' })
    expect(await getBalance(db, ws)).toMatchObject({ available: 3, reserved: 0 })
  })

  it('parallel reservations racing for the last credits: exactly floor(balance / cost) succeed', async () => {
    const ws = await workspace(7)
    const results = await Promise.all(Array.from({ length: 12 }, () => reserve(ws, 2)))
    expect(results.filter((r) => r.ok)).toHaveLength(3)
    expect(await getBalance(db, ws)).toMatchObject({ available: 1, reserved: 6 })
    const sum = await db.ledgerEntry.groupBy({ by: ['kind'], where: { workspaceId: ws }, _sum: { amount: true } })
    expect(Object.fromEntries(sum.map((s) => [s.kind, s._sum.amount]))).toEqual({ grant: 7, reserve: 6 })
  })

  it('enforces the spending cap on spent + reserved this month', async () => {
    const ws = await workspace(100, 5)
    expect((await reserve(ws, 3)).ok).toBe(true)
    expect(await reserve(ws, 3)).toMatchObject({ ok: false, reason: 'spending_cap' })
    expect((await reserve(ws, 2)).ok).toBe(true)
  })
})
