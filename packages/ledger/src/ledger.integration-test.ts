import { createPrisma, type Db } from '@quire/db'
import { newId } from '@quire/domain'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expireOrphanedHolds } from './hold-expiry.ts'
import {
  ENTRY_ACCOUNTS,
  getBalance,
  grantCredits,
  type LedgerAccount,
  type LedgerEntryKind,
  reserveCredits,
  settleCredits,
  voidCredits,
} from './ledger.ts'
import { listLedgerEntries } from './ledger-entries.ts'
import { ledgerMetrics } from './ledger-metrics.ts'
import { reconcileLedger } from './reconcile.ts'

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!, { poolMax: 20 })
})
afterAll(async () => db.$disconnect())

async function workspace(credits: number, spendingCap: number | null = null) {
  const id = newId('ws')
  await db.workspace.create({ data: { id, name: id, apiForm: 'B', spendingCap } })
  if (credits) await db.$transaction((tx) => grantCredits(tx, { workspaceId: id, amount: credits }))
  return id
}

const reserve = (workspaceId: string, amount: number, opts: { jobId?: string; now?: Date } = {}) => {
  const jobId = opts.jobId ?? newId('job')
  return db
    .$transaction((tx) => reserveCredits(tx, { workspaceId, jobId, amount, now: opts.now }))
    .then((r) => ({ ...r, jobId }))
}

const settle = (jobId: string, used: number) => db.$transaction((tx) => settleCredits(tx, { jobId, used }))

function jobRow(workspaceId: string, jobId: string, status: 'queued' | 'failed' | 'completed' = 'queued') {
  return db.job.create({
    data: {
      id: jobId,
      workspaceId,
      pipelineId: 'parse',
      pipelineVersion: 1,
      definition: {},
      status,
      pageCount: 1,
      creditsReserved: 0,
    },
  })
}

describe('ledger on real PostgreSQL', () => {
  it('reserve holds credits, settle posts at most the hold and releases the rest, exactly once', async () => {
    const ws = await workspace(10)
    const r = await reserve(ws, 4)
    expect(r.ok).toBe(true)
    expect(await getBalance(db, ws)).toMatchObject({ available: 6, reserved: 4, spent: 0 })
    expect(await settle(r.jobId, 9)).toEqual({ posted: 4 })
    expect(await settle(r.jobId, 1)).toBeNull()
    expect(await getBalance(db, ws)).toMatchObject({ available: 6, reserved: 0, spent: 4 })

    const partial = await reserve(ws, 5)
    expect(await settle(partial.jobId, 2)).toEqual({ posted: 2 })
    expect(await getBalance(db, ws)).toMatchObject({ available: 4, reserved: 0, spent: 6 })
    const { data } = await listLedgerEntries(db, { workspaceId: ws, limit: 100, jobId: partial.jobId })
    expect(data.map((e) => [e.kind, e.amount, e.debit_account, e.credit_account]).sort()).toEqual([
      ['release', 3, 'reserved', 'available'],
      ['reserve', 5, 'available', 'reserved'],
      ['settle', 2, 'reserved', 'spent'],
    ])
  })

  it('void releases the whole hold once; settling a voided hold does nothing', async () => {
    const ws = await workspace(5)
    const r = await reserve(ws, 5)
    expect(await db.$transaction((tx) => voidCredits(tx, { jobId: r.jobId }))).toEqual({ released: 5 })
    expect(await db.$transaction((tx) => voidCredits(tx, { jobId: r.jobId }))).toBeNull()
    expect(await settle(r.jobId, 5)).toBeNull()
    expect(await getBalance(db, ws)).toMatchObject({ available: 5, reserved: 0, spent: 0 })
  })

  it('refuses a reservation larger than the balance, and a second reservation for the same job', async () => {
    const ws = await workspace(3)
    expect(await reserve(ws, 4)).toMatchObject({ ok: false, reason: 'insufficient_credits' })
    const r = await reserve(ws, 2)
    expect(r).toMatchObject({ ok: true, holdId: `hold_${r.jobId}` })
    expect(await reserve(ws, 2, { jobId: r.jobId })).toMatchObject({ ok: true, holdId: `hold_${r.jobId}` })
    expect(await getBalance(db, ws)).toMatchObject({ available: 1, reserved: 2 })
    await expect(reserve(ws, 1, { jobId: r.jobId })).rejects.toThrow(/already holds/)
  })

  it('takes integer amounts only', async () => {
    const ws = await workspace(3)
    await expect(reserve(ws, 1.5)).rejects.toBeInstanceOf(RangeError)
    await expect(reserve(ws, -1)).rejects.toBeInstanceOf(RangeError)
    await expect(
      db.$transaction((tx) => grantCredits(tx, { workspaceId: ws, amount: 2 ** 31 })),
    ).rejects.toBeInstanceOf(RangeError)
  })

  it('parallel reservations racing for the last credits: exactly floor(balance / cost) succeed', async () => {
    const ws = await workspace(7)
    const results = await Promise.all(Array.from({ length: 12 }, () => reserve(ws, 2)))
    expect(results.filter((r) => r.ok)).toHaveLength(3)
    expect(await getBalance(db, ws)).toMatchObject({ available: 1, reserved: 6 })
    const listed = (await listLedgerEntries(db, { workspaceId: ws, limit: 100 })).data
    const sum = (kind: string) => listed.filter((e) => e.kind === kind).reduce((n, e) => n + e.amount, 0)
    expect([sum('grant'), sum('reserve'), listed.length]).toEqual([7, 6, 4])
  })

  it('parallel reservations racing for the spending cap: exactly floor(cap / cost) succeed', async () => {
    const ws = await workspace(100, 7)
    const results = await Promise.all(Array.from({ length: 12 }, () => reserve(ws, 2)))
    expect(results.filter((r) => r.ok)).toHaveLength(3)
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'spending_cap')).toBe(true)
    expect(await getBalance(db, ws)).toMatchObject({ available: 94, reserved: 6 })
  })

  it('spending cap counts spent + reserved of holds placed this UTC month; released credits free room again', async () => {
    const ws = await workspace(100, 5)
    const march = new Date('2031-03-31T23:59:59Z')
    const a = await reserve(ws, 3, { now: march })
    expect(a.ok).toBe(true)
    expect(await reserve(ws, 3, { now: march })).toMatchObject({ ok: false, reason: 'spending_cap' })
    expect((await reserve(ws, 2, { now: march })).ok).toBe(true)
    await settle(a.jobId, 1) // 1 spent, 2 released: 3 of 5 used this month
    expect((await reserve(ws, 2, { now: march })).ok).toBe(true)
    expect(await reserve(ws, 1, { now: march })).toMatchObject({ ok: false, reason: 'spending_cap' })
    // A new UTC month starts from zero; settling a March hold in April does not touch April's count.
    const april = new Date('2031-04-01T00:00:00Z')
    const b = await reserve(ws, 5, { now: april })
    expect(b.ok).toBe(true)
    await db.workspace.update({ where: { id: ws }, data: { spendingCap: 5 } })
    expect(await reserve(ws, 1, { now: april })).toMatchObject({ ok: false, reason: 'spending_cap' })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('PostgreSQL itself refuses a negative balance, an entry on the wrong accounts and a second settle entry', async () => {
    const ws = await workspace(2)
    await expect(db.$executeRaw`UPDATE workspaces SET credits_available = -1 WHERE id = ${ws}`).rejects.toThrow(
      /check/i,
    )
    const r = await reserve(ws, 2)
    await settle(r.jobId, 2)
    const insert = (kind: string, debit: string, credit: string) => db.$executeRaw`
      INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount)
      VALUES (${newId('led')}, ${ws}, ${r.jobId}, ${kind}::"LedgerEntryKind", ${debit}::"LedgerAccount", ${credit}::"LedgerAccount", 1)`
    await expect(insert('void', 'available', 'spent')).rejects.toThrow(/check/i)
    await expect(insert('settle', 'reserved', 'spent')).rejects.toThrow(/unique/i)
    await expect(db.$executeRaw`UPDATE credit_holds SET posted = 3 WHERE job_id = ${r.jobId}`).rejects.toThrow(/check/i)
  })

  // Migration *_ledger_checks_compact: one CHECK per table (a PL/pgSQL function). Every combination against the rules
  // written out here, so the function and the rules cannot drift apart unnoticed.
  it('PostgreSQL accepts exactly the entries the rules allow: every kind × account pair, amount and job presence', async () => {
    const ws = await workspace(0)
    const kinds = Object.keys(ENTRY_ACCOUNTS) as LedgerEntryKind[]
    const accounts: LedgerAccount[] = ['issuance', 'available', 'reserved', 'spent']
    const outcomes: string[] = []
    for (const kind of kinds)
      for (const debit of accounts)
        for (const credit of accounts)
          for (const withJob of [true, false])
            for (const amount of [1, 0, -3]) {
              const allowed =
                ENTRY_ACCOUNTS[kind].debit === debit &&
                ENTRY_ACCOUNTS[kind].credit === credit &&
                amount > 0 &&
                withJob === (kind !== 'grant')
              const insert = db.$executeRaw`
                INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount)
                VALUES (${newId('led')}, ${ws}, ${withJob ? newId('job') : null}, ${kind}::"LedgerEntryKind",
                        ${debit}::"LedgerAccount", ${credit}::"LedgerAccount", ${amount})`
              const accepted = await insert.then(
                () => true,
                (err: Error) => {
                  if (!/ledger_entries_valid/.test(err.message)) throw err
                  return false
                },
              )
              if (accepted !== allowed) outcomes.push(`${kind} ${debit}→${credit} ${amount} job:${withJob} ${accepted}`)
            }
    expect(outcomes).toEqual([])
    await db.$executeRaw`DELETE FROM ledger_entries WHERE workspace_id = ${ws}`
  })

  it('PostgreSQL accepts exactly the holds the rules allow: pending, posted for at most the hold, released whole', async () => {
    const ws = await workspace(0)
    const outcomes: string[] = []
    for (const status of ['pending', 'posted', 'voided', 'expired'])
      for (const amount of [4, 0, -1])
        for (const posted of [null, 0, 2, 4, 5, -1])
          for (const resolved of [false, true])
            for (const day of [1, 2]) {
              const allowed =
                amount >= 0 &&
                day === 1 &&
                (status === 'pending'
                  ? posted === null && !resolved
                  : status === 'posted'
                    ? posted !== null && posted >= 0 && posted <= amount && resolved
                    : posted === 0 && resolved)
              const insert = db.$executeRaw`
                INSERT INTO credit_holds (id, workspace_id, job_id, amount, status, posted, period, resolved_at)
                VALUES (${newId('hold')}, ${ws}, ${newId('job')}, ${amount}, ${status}::"HoldStatus", ${posted},
                        ${`2026-03-0${day}`}::date, ${resolved ? new Date() : null})`
              const accepted = await insert.then(
                () => true,
                (err: Error) => {
                  if (!/credit_holds_valid/.test(err.message)) throw err
                  return false
                },
              )
              if (accepted !== allowed)
                outcomes.push(`${status} amount:${amount} posted:${posted} resolved:${resolved} day:${day} ${accepted}`)
            }
    expect(outcomes).toEqual([])
    await db.$executeRaw`DELETE FROM credit_holds WHERE workspace_id = ${ws}`
  })

  it('the sweeper expires a hold whose job is gone or ended unsettled, and leaves running and completed jobs alone', async () => {
    const ws = await workspace(40)
    const running = await reserve(ws, 5)
    await jobRow(ws, running.jobId)
    const deleted = await reserve(ws, 6)
    const failed = await reserve(ws, 7)
    await jobRow(ws, failed.jobId, 'failed')
    const completed = await reserve(ws, 8)
    await jobRow(ws, completed.jobId, 'completed')
    expect(await expireOrphanedHolds(db, { workspaceId: ws, minAgeMs: 60_000 })).toEqual([])
    const expired = await expireOrphanedHolds(db, { workspaceId: ws, minAgeMs: 0 })
    expect(expired.sort()).toEqual([deleted.jobId, failed.jobId].sort())
    expect(await expireOrphanedHolds(db, { workspaceId: ws, minAgeMs: 0 })).toEqual([])
    expect(await getBalance(db, ws)).toMatchObject({ available: 27, reserved: 13, spent: 0 })
    const kinds = await db.ledgerEntry.findMany({ where: { workspaceId: ws, kind: 'expire' } })
    expect(kinds.map((k) => k.amount).sort()).toEqual([6, 7])
    // A completed job whose hold was never settled is a bug to surface, not something to guess a charge for.
    const report = await reconcileLedger(db, { workspaceId: ws })
    expect(report.holdAnomalies).toMatchObject([{ reason: 'pending_after_job_finished', jobId: completed.jobId }])
    await settle(completed.jobId, 8)
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('lists entries newest first with a keyset cursor: no duplicates or gaps while entries are added', async () => {
    const ws = await workspace(50)
    // Holds (listed as `reserve`) and entry rows (grant, settle, release) interleaved in time.
    for (let i = 0; i < 6; i++) {
      const r = await reserve(ws, 2)
      if (i % 2) await settle(r.jobId, 1)
    }
    const all = (await listLedgerEntries(db, { workspaceId: ws, limit: 100 })).data
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; page < 10; page++) {
      const res = await listLedgerEntries(db, { workspaceId: ws, limit: 3, cursor })
      seen.push(...res.data.map((e) => e.id))
      if (page === 0) await reserve(ws, 1) // newer than the cursor: not on later pages
      if (!res.hasMore) break
      cursor = res.nextCursor!
    }
    expect(new Set(seen).size).toBe(seen.length)
    expect(all.map((e) => e.kind).sort()).toEqual([
      'grant',
      ...Array(3).fill('release'),
      ...Array(6).fill('reserve'),
      ...Array(3).fill('settle'),
    ])
    expect(seen).toEqual(all.map((e) => e.id))
    const times = all.map((e) => e.created_at)
    expect(times).toEqual([...times].sort().reverse())
    await expect(listLedgerEntries(db, { workspaceId: ws, limit: 3, cursor: 'nope' })).rejects.toMatchObject({
      code: 'INVALID_PARAMETER',
    })
  })

  it('a reservation is its hold: listed as the reserve entry with the hold id, a retired reserve row beside it neither listed nor counted', async () => {
    const ws = await workspace(10)
    const r = await reserve(ws, 4)
    const reserves = (await listLedgerEntries(db, { workspaceId: ws, limit: 10, kind: 'reserve' })).data
    expect(reserves).toMatchObject([
      { id: `hold_${r.jobId}`, job_id: r.jobId, amount: 4, debit_account: 'available', credit_account: 'reserved' },
    ])
    expect(await db.ledgerEntry.count({ where: { jobId: r.jobId } })).toBe(0)
    // What a process of the previous release still writes beside the hold while a rolling upgrade runs.
    await db.$executeRaw`
      INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount)
      VALUES (${newId('led')}, ${ws}, ${r.jobId}, 'reserve', 'available', 'reserved', 4)`
    expect((await listLedgerEntries(db, { workspaceId: ws, limit: 10, jobId: r.jobId })).data).toHaveLength(1)
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
    await settle(r.jobId, 4)
    expect(
      (await listLedgerEntries(db, { workspaceId: ws, limit: 10, jobId: r.jobId })).data.map((e) => e.kind).sort(),
    ).toEqual(['reserve', 'settle'])
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('reconciliation and the drift gauge report zero, then exactly the credits an out-of-band write changed', async () => {
    const ws = await workspace(10)
    const r = await reserve(ws, 4)
    await settle(r.jobId, 3)
    const metrics = ledgerMetrics(db, { cacheMs: 0 })
    expect(await metrics.metrics()).toMatch(/^quire_ledger_drift_credits 0$/m)
    expect(await reconcileLedger(db)).toMatchObject({ driftCredits: 0, holdAnomalies: [], maxSettlesPerJob: 1 })

    await db.$executeRaw`UPDATE workspaces SET credits_available = credits_available + 5 WHERE id = ${ws}`
    try {
      const report = await reconcileLedger(db, { workspaceId: ws })
      expect(report.driftCredits).toBe(5)
      expect(report.drifts).toEqual([{ workspaceId: ws, check: 'available_vs_entries', stored: 12, computed: 7 }])
      expect(await metrics.metrics()).toMatch(/^quire_ledger_drift_credits 5$/m)
    } finally {
      await db.$executeRaw`UPDATE workspaces SET credits_available = credits_available - 5 WHERE id = ${ws}`
    }
    await db.$executeRaw`DELETE FROM ledger_entries WHERE job_id = ${r.jobId} AND kind = 'release'`
    try {
      const report = await reconcileLedger(db, { workspaceId: ws })
      expect(report.holdAnomalies).toMatchObject([
        { reason: 'entries_mismatch', jobId: r.jobId, status: 'posted', entries: { settle: 3, release: 0 } },
      ])
      expect(await metrics.metrics()).toMatch(/^quire_ledger_hold_anomalies 1$/m)
    } finally {
      await db.$executeRaw`
        INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount)
        VALUES (${newId('led')}, ${ws}, ${r.jobId}, 'release', 'reserved', 'available', 1)`
    }
    expect(await reconcileLedger(db)).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })
})
