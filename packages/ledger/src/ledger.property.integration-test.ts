// Property-based: random sequences of grant / reserve / grouped reserve (CreditReserver) / settle / void / expire /
// crash-and-retry / races, run against
// real PostgreSQL next to a plain in-memory model; after every step the database must agree with the model and with
// the ledger's invariants. QUIRE_LEDGER_PBT_RUNS sets the number of sequences (default 30).
import { createPrisma, type Db, directSql } from '@quire/db'
import { newId } from '@quire/domain'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CreditReserver } from './credit-reserver.ts'
import { expireOrphanedHolds } from './hold-expiry.ts'
import { ENTRY_ACCOUNTS, getBalance, grantCredits, reserveCredits, settleCredits, voidCredits } from './ledger.ts'
import { reconcileLedger } from './reconcile.ts'

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!, { poolMax: 12 })
})
afterAll(async () => db.$disconnect())

type HoldModel = {
  jobId: string
  amount: number
  status: 'pending' | 'posted' | 'voided' | 'expired'
  posted: number | null
  month: number
}
type Model = {
  granted: number
  available: number
  reserved: number
  spent: number
  cap: number | null
  month: number
  holds: HoldModel[]
}

type Op =
  | { t: 'grant'; amount: number }
  | { t: 'reserve'; amount: number; crash: boolean }
  | { t: 'race_reserve'; n: number; amount: number }
  | { t: 'grouped_reserve'; amounts: number[]; repeatFirst: boolean }
  | { t: 'settle'; pick: number; used: number; mode: 'once' | 'crash_then_retry' | 'retry_after_commit' }
  | { t: 'race_settle'; pick: number; used: [number, number] }
  | { t: 'race_settle_void'; pick: number; used: number }
  | { t: 'void'; pick: number; crash: boolean }
  | { t: 'expire'; pick: number; racingSettle: boolean }
  | { t: 'cap'; cap: number | null }
  | { t: 'next_month' }

const amount = fc.integer({ min: 0, max: 30 })
const OP: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ t: fc.constant('grant' as const), amount: fc.integer({ min: 1, max: 60 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('reserve' as const), amount, crash: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('race_reserve' as const),
      n: fc.integer({ min: 2, max: 8 }),
      amount: fc.integer({ min: 1, max: 15 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('grouped_reserve' as const),
      amounts: fc.array(amount, { minLength: 1, maxLength: 10 }),
      repeatFirst: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('settle' as const),
      pick: fc.nat(),
      used: fc.integer({ min: 0, max: 40 }),
      mode: fc.constantFrom('once' as const, 'crash_then_retry' as const, 'retry_after_commit' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('race_settle' as const), pick: fc.nat(), used: fc.tuple(amount, amount) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('race_settle_void' as const), pick: fc.nat(), used: amount }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('void' as const), pick: fc.nat(), crash: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('expire' as const), pick: fc.nat(), racingSettle: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('cap' as const),
      cap: fc.option(fc.integer({ min: 0, max: 80 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'next_month' as const }) },
)

class Crash extends Error {}

const monthDate = (month: number) => new Date(Date.UTC(2031, month, 10, 12))

/** Credits the model says count against `month`'s spending cap: pending holds whole, posted holds for what posted. */
const periodUsed = (m: Model, month: number) =>
  m.holds
    .filter((h) => h.month === month)
    .reduce((n, h) => n + (h.status === 'pending' ? h.amount : h.status === 'posted' ? h.posted! : 0), 0)

function modelReserve(m: Model, amount: number): 'ok' | 'insufficient_credits' | 'spending_cap' {
  if (m.available < amount) return 'insufficient_credits'
  if (m.cap !== null && periodUsed(m, m.month) + amount > m.cap) return 'spending_cap'
  return 'ok'
}

function modelApplyHold(m: Model, jobId: string, amount: number) {
  m.available -= amount
  m.reserved += amount
  m.holds.push({ jobId, amount, status: 'pending', posted: null, month: m.month })
}

function modelResolve(m: Model, h: HoldModel, to: 'posted' | 'voided' | 'expired', used = 0) {
  const posted = to === 'posted' ? Math.min(used, h.amount) : 0
  h.status = to
  h.posted = posted
  m.reserved -= h.amount
  m.spent += posted
  m.available += h.amount - posted
}

const jobRow = (workspaceId: string, id: string, amount: number) => ({
  id,
  workspaceId,
  pipelineId: 'parse',
  pipelineVersion: 1,
  definition: {},
  status: 'queued' as const,
  pageCount: 1,
  creditsReserved: amount,
})

/** The same transaction shape as core's createJob: the hold and the job row commit together or not at all. */
async function reserveJob(ws: string, amount: number, month: number, crash = false) {
  const jobId = newId('job')
  const result = await db.$transaction(async (tx) => {
    const r = await reserveCredits(tx, { workspaceId: ws, jobId, amount, now: monthDate(month) })
    if (!r.ok) return r
    await tx.job.create({ data: jobRow(ws, jobId, amount) })
    if (crash) throw new Crash()
    return r
  })
  return { jobId, result }
}

const settleTx = (jobId: string, used: number) => db.$transaction((tx) => settleCredits(tx, { jobId, used }))

async function apply(ws: string, m: Model, op: Op) {
  const pick = (i: number) => (m.holds.length ? m.holds[i % m.holds.length]! : null)
  switch (op.t) {
    case 'grant': {
      await db.$transaction((tx) => grantCredits(tx, { workspaceId: ws, amount: op.amount }))
      m.granted += op.amount
      m.available += op.amount
      return
    }
    case 'reserve': {
      const expected = modelReserve(m, op.amount)
      if (op.crash) {
        // The submission's transaction dies after reserving (e.g. the job insert fails): nothing may remain.
        const attempt = reserveJob(ws, op.amount, m.month, true)
        await (expected === 'ok' ? expect(attempt).rejects.toBeInstanceOf(Crash) : attempt)
        return
      }
      const { jobId, result } = await reserveJob(ws, op.amount, m.month)
      expect(result.ok ? 'ok' : result.reason).toBe(expected)
      if (result.ok) modelApplyHold(m, jobId, op.amount)
      return
    }
    case 'race_reserve': {
      // n submissions race for the last credits: exactly as many succeed as the balance and the cap allow.
      let room = Math.floor(m.available / op.amount)
      if (m.cap !== null) room = Math.min(room, Math.floor(Math.max(0, m.cap - periodUsed(m, m.month)) / op.amount))
      const results = await Promise.all(Array.from({ length: op.n }, () => reserveJob(ws, op.amount, m.month)))
      const won = results.filter((r) => r.result.ok)
      expect(won.length).toBe(Math.min(op.n, room))
      for (const r of won) modelApplyHold(m, r.jobId, op.amount)
      return
    }
    case 'grouped_reserve': {
      // Reservations sent at once through one reserver: the first goes alone, the rest as one batch behind it, each
      // decided in call order exactly as the model decides it one after the other. The first job may be sent again
      // at the end (same job, same amount): it gets the hold it already has or the refusal it already had.
      const reserver = new CreditReserver(directSql(db))
      const calls = op.amounts.map((amount) => ({ jobId: newId('job'), amount }))
      // Each job exists before its reservation (the hold-expiry sweeper takes a hold without a job for an orphan).
      await db.job.createMany({ data: calls.map((c) => jobRow(ws, c.jobId, c.amount)) })
      if (op.repeatFirst) calls.push(calls[0]!)
      const results = await Promise.all(
        calls.map((c) => reserver.reserve({ workspaceId: ws, ...c, now: monthDate(m.month) })),
      )
      const decided = new Map<string, string>()
      for (const [i, c] of calls.entries()) {
        const got = results[i]!.ok ? 'ok' : (results[i] as { reason: string }).reason
        const known = decided.get(c.jobId)
        if (known !== undefined) {
          // The repeat: held if the first was held; refused if the first was (by the balance now, or as it was).
          expect(known === 'ok' ? got === 'ok' : got !== 'ok').toBe(true)
          continue
        }
        const expected = modelReserve(m, c.amount)
        expect(got).toBe(expected)
        decided.set(c.jobId, got)
        if (got === 'ok') modelApplyHold(m, c.jobId, c.amount)
      }
      return
    }
    case 'settle': {
      const h = pick(op.pick)
      if (!h) return
      const wasPending = h.status === 'pending'
      if (op.mode === 'crash_then_retry') {
        // The worker dies mid-settlement: its transaction rolls back; the retried stage settles once.
        await expect(
          db.$transaction(async (tx) => {
            await settleCredits(tx, { jobId: h.jobId, used: op.used })
            throw new Crash()
          }),
        ).rejects.toBeInstanceOf(Crash)
        await check(ws, m)
      }
      const r = await settleTx(h.jobId, op.used)
      expect(r).toEqual(wasPending ? { posted: Math.min(op.used, h.amount) } : null)
      if (wasPending) modelResolve(m, h, 'posted', op.used)
      if (op.mode === 'retry_after_commit') expect(await settleTx(h.jobId, op.used + 1)).toBeNull()
      return
    }
    case 'race_settle': {
      const h = pick(op.pick)
      if (!h) return
      const rs = await Promise.all(op.used.map((u) => settleTx(h.jobId, u)))
      const winners = rs.flatMap((r, i) => (r ? [i] : []))
      expect(winners.length).toBe(h.status === 'pending' ? 1 : 0)
      if (winners.length) {
        const used = op.used[winners[0]!]!
        expect(rs[winners[0]!]).toEqual({ posted: Math.min(used, h.amount) })
        modelResolve(m, h, 'posted', used)
      }
      return
    }
    case 'race_settle_void': {
      // A stage settling while the job is cancelled: exactly one of them resolves the hold.
      const h = pick(op.pick)
      if (!h) return
      const [s, v] = await Promise.all([
        settleTx(h.jobId, op.used),
        db.$transaction((tx) => voidCredits(tx, { jobId: h.jobId })),
      ])
      expect(Number(s !== null) + Number(v !== null)).toBe(h.status === 'pending' ? 1 : 0)
      if (s) modelResolve(m, h, 'posted', op.used)
      if (v) modelResolve(m, h, 'voided')
      return
    }
    case 'void': {
      const h = pick(op.pick)
      if (!h) return
      if (op.crash) {
        await expect(
          db.$transaction(async (tx) => {
            await voidCredits(tx, { jobId: h.jobId })
            throw new Crash()
          }),
        ).rejects.toBeInstanceOf(Crash)
      }
      const r = await db.$transaction((tx) => voidCredits(tx, { jobId: h.jobId }))
      expect(r).toEqual(h.status === 'pending' ? { released: h.amount } : null)
      if (h.status === 'pending') modelResolve(m, h, 'voided')
      return
    }
    case 'expire': {
      // The job disappears; the sweeper (maybe racing a late settlement) expires its hold at most once.
      const h = pick(op.pick)
      if (!h) return
      await db.job.deleteMany({ where: { id: h.jobId } })
      const [expired, settled] = await Promise.all([
        expireOrphanedHolds(db, { minAgeMs: 0, workspaceId: ws }),
        op.racingSettle ? settleTx(h.jobId, h.amount) : Promise.resolve(null),
      ])
      expect(expired.length + Number(settled !== null)).toBe(h.status === 'pending' ? 1 : 0)
      if (settled) modelResolve(m, h, 'posted', h.amount)
      if (expired.length) {
        expect(expired).toEqual([h.jobId])
        modelResolve(m, h, 'expired')
      }
      return
    }
    case 'cap': {
      await db.workspace.update({ where: { id: ws }, data: { spendingCap: op.cap } })
      m.cap = op.cap
      return
    }
    case 'next_month': {
      m.month += 1
      return
    }
  }
}

/** Everything that must hold after every step, read back from PostgreSQL. */
async function check(ws: string, m: Model) {
  const balance = await getBalance(db, ws)
  expect(balance).toEqual({ available: m.available, reserved: m.reserved, spent: m.spent, spending_cap: m.cap })
  // Conservation: only grants change the total; no account is ever negative.
  expect(balance.available + balance.reserved + balance.spent).toBe(m.granted)
  for (const v of [balance.available, balance.reserved, balance.spent]) expect(v).toBeGreaterThanOrEqual(0)

  // Each balance is the sum of its entries (computed here, independently of reconcileLedger): the entry rows, and
  // each hold as its reservation (a reservation writes no entry row).
  const entries = await db.ledgerEntry.findMany({ where: { workspaceId: ws } })
  const holds = await db.creditHold.findMany({ where: { workspaceId: ws } })
  const sum = { issuance: 0, available: 0, reserved: 0, spent: 0 }
  const movements = [
    ...entries.map((e) => ({ kind: e.kind, amount: e.amount, debit: e.debitAccount, credit: e.creditAccount })),
    ...holds.map((h) => ({ kind: 'reserve' as const, amount: h.amount, ...ENTRY_ACCOUNTS.reserve })),
  ]
  expect(entries.filter((e) => e.kind === 'reserve')).toEqual([])
  for (const e of movements) {
    expect(Number.isInteger(e.amount) && (e.amount > 0 || e.kind === 'reserve')).toBe(true)
    expect({ debit: e.debit, credit: e.credit }).toEqual(ENTRY_ACCOUNTS[e.kind])
    sum[e.debit] -= e.amount
    sum[e.credit] += e.amount
  }
  expect(sum).toEqual({ issuance: 0 - m.granted || 0, available: m.available, reserved: m.reserved, spent: m.spent })

  // No hold resolved twice: per job at most one reserve, one settle, one release and one void-or-expire, and never
  // a settle together with a void or an expiry.
  const perJob = new Map<string, string[]>()
  for (const e of entries) if (e.jobId) perJob.set(e.jobId, [...(perJob.get(e.jobId) ?? []), e.kind])
  for (const kinds of perJob.values()) {
    expect(new Set(kinds).size).toBe(kinds.length)
    const closes = kinds.filter((k) => k === 'void' || k === 'expire').length
    expect(closes + Number(kinds.includes('settle') || kinds.includes('release'))).toBeLessThanOrEqual(1)
  }

  // Every hold is in the state the model says.
  const byJob = new Map(holds.map((h) => [h.jobId, h]))
  expect(holds.length).toBe(m.holds.length)
  for (const h of m.holds)
    expect(byJob.get(h.jobId)).toMatchObject({ amount: h.amount, status: h.status, posted: h.posted })

  // The spending-cap counter covers the month of the last accepted reservation.
  const w = await db.workspace.findUniqueOrThrow({ where: { id: ws } })
  if (w.spendPeriod) {
    const month = (w.spendPeriod.getUTCFullYear() - 2031) * 12 + w.spendPeriod.getUTCMonth()
    expect(w.spendPeriodUsed).toBe(periodUsed(m, month))
  }

  const report = await reconcileLedger(db, { workspaceId: ws })
  expect(report).toMatchObject({ driftCredits: 0, drifts: [], holdAnomalies: [] })
  expect(report.maxSettlesPerJob).toBeLessThanOrEqual(1)
}

describe('ledger properties on real PostgreSQL', () => {
  it('conservation, balance = sum of entries, no negative balance, no hold resolved twice, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(OP, { minLength: 1, maxLength: 30, size: 'max' }),
        fc.integer({ min: 0, max: 100 }),
        async (ops, start) => {
          const ws = newId('ws')
          await db.workspace.create({ data: { id: ws, name: 'pbt', apiForm: 'B' } })
          const m: Model = { granted: 0, available: 0, reserved: 0, spent: 0, cap: null, month: 0, holds: [] }
          if (start) await apply(ws, m, { t: 'grant', amount: start })
          for (const op of ops) {
            await apply(ws, m, op)
            await check(ws, m)
          }
        },
      ),
      {
        numRuns: Number(process.env.QUIRE_LEDGER_PBT_RUNS ?? 30),
        // Found by CI: a batch's job refused by the cap was explained as short of credits once a later, smaller job of
        // the same batch had taken some (the reason was read after the commit).
        examples: [
          [
            [
              { t: 'cap', cap: 1 },
              { t: 'grouped_reserve', amounts: [0, 3, 1, 0], repeatFirst: false },
              { t: 'settle', pick: 0, used: 0, mode: 'once' },
            ],
            3,
          ],
        ],
      },
    )
    // And across all workspaces the tests left behind, nothing drifted.
    const all = await reconcileLedger(db)
    expect(all).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  }, 900_000)
})
