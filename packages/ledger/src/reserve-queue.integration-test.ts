// reserveCredits is a call of the `ledger_reserve_credits` function (migration `*_ledger_reserve_function`), and
// reservations on one workspace queue on an advisory lock before its row. What that queue must not change, or must
// add: duplicates of one job racing, a transaction that already holds the workspace row, a missing workspace.
import { createPrisma, type Db } from '@quire/db'
import { newId } from '@quire/domain'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getBalance, grantCredits, reserveCredits } from './ledger.ts'
import { reconcileLedger } from './reconcile.ts'

let db: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!, { poolMax: 20 })
})
afterAll(async () => db.$disconnect())

async function workspace(credits: number) {
  const id = newId('ws')
  await db.workspace.create({ data: { id, name: id, apiForm: 'B' } })
  if (credits) await grantCredits(db, { workspaceId: id, amount: credits })
  return id
}

/** Waits until some other session is blocked in a reservation (on the queue or on the workspace row). */
async function untilReservationWaits() {
  for (let i = 0; i < 500; i++) {
    const rows = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%ledger_reserve_credits%'`
    if (rows[0]!.n > 0) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('no reservation started waiting')
}

describe('reservation queue on real PostgreSQL', () => {
  it('the same job reserved by racing callers: one hold, charged once, every caller gets it', async () => {
    const ws = await workspace(10)
    const jobId = newId('job')
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        db.$transaction((tx) => reserveCredits(tx, { workspaceId: ws, jobId, amount: 3 })),
      ),
    )
    expect(results).toEqual(Array.from({ length: 8 }, () => ({ ok: true, holdId: `hold_${jobId}` })))
    expect(await getBalance(db, ws)).toMatchObject({ available: 7, reserved: 3 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('autocommit reservations (sent to the pool without Prisma): racers for the last credits, a job raced twice', async () => {
    const ws = await workspace(10)
    const jobs = Array.from({ length: 6 }, () => newId('job'))
    // Each job twice at once: 12 calls, 6 jobs of 3 credits, 10 available: exactly 3 jobs are held, each once.
    const results = await Promise.all(
      [...jobs, ...jobs].map((jobId) => reserveCredits(db, { workspaceId: ws, jobId, amount: 3 })),
    )
    for (const [i, r] of results.entries()) if (r.ok) expect(r.holdId).toBe(`hold_${jobs[i % jobs.length]}`)
    // A job's two calls may both get its hold (one inserted it, the other found it), never a second one.
    expect(new Set(results.flatMap((r) => (r.ok ? [r.holdId] : []))).size).toBe(3)
    expect(new Set(results.flatMap((r) => (r.ok ? [] : [r.reason])))).toEqual(new Set(['insufficient_credits']))
    expect(await getBalance(db, ws)).toMatchObject({ available: 1, reserved: 9 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('a job reserved three times at once, over and over: every call answers (held once), none fails on a unique index', async () => {
    // The hold has two unique keys (id and job_id). With only the id as the conflict arbiter, a racer could meet the
    // first call's uncommitted row in the job_id index and fail with a unique violation: 7 in 1,800 such calls.
    const ws = await workspace(1_000_000)
    const failures: unknown[] = []
    for (let round = 0; round < 100; round++) {
      const jobs = Array.from({ length: 4 }, () => newId('job'))
      const settled = await Promise.allSettled(
        [...jobs, ...jobs, ...jobs].map((jobId) => reserveCredits(db, { workspaceId: ws, jobId, amount: 1 })),
      )
      for (const r of settled)
        if (r.status === 'rejected') failures.push(String(r.reason).slice(0, 300))
        else expect(r.value.ok).toBe(true)
    }
    expect(failures).toEqual([])
    expect(await getBalance(db, ws)).toMatchObject({ available: 1_000_000 - 400, reserved: 400 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('a transaction that already updated the workspace row reserves past the queue instead of deadlocking', async () => {
    const ws = await workspace(10)
    let queued: Promise<unknown> | undefined
    const mine = await db.$transaction(
      async (tx) => {
        await grantCredits(tx, { workspaceId: ws, amount: 5 }) // this transaction now holds the workspace row
        // Another reservation takes the queue and waits for the row this transaction holds.
        queued = reserveCredits(db, { workspaceId: ws, jobId: newId('job'), amount: 4 })
        await untilReservationWaits()
        return reserveCredits(tx, { workspaceId: ws, jobId: newId('job'), amount: 2 })
      },
      { timeout: 20_000 },
    )
    // Had it queued behind the other reservation, PostgreSQL would have found a deadlock and aborted one of them.
    expect(mine.ok).toBe(true)
    expect(await queued).toMatchObject({ ok: true })
    expect(await getBalance(db, ws)).toMatchObject({ available: 9, reserved: 6 })
  })

  it('a missing workspace is an error, not a refusal', async () => {
    await expect(reserveCredits(db, { workspaceId: newId('ws'), jobId: newId('job'), amount: 1 })).rejects.toThrow(
      /not found/,
    )
  })

  it('a refusal leaves no hold behind (written before the check, deleted on refusal), and a reservation no entry row', async () => {
    const ws = await workspace(2)
    const jobId = newId('job')
    const rowsOf = async (job: string) => {
      const [row] = await db.$queryRaw<{ holds: number; entries: number }[]>`
        SELECT (SELECT count(*)::int FROM credit_holds WHERE job_id = ${job}) AS holds,
               (SELECT count(*)::int FROM ledger_entries WHERE job_id = ${job}) AS entries`
      return row
    }
    expect(await reserveCredits(db, { workspaceId: ws, jobId, amount: 3 })).toEqual({
      ok: false,
      reason: 'insufficient_credits',
    })
    expect(await rowsOf(jobId)).toEqual({ holds: 0, entries: 0 })
    // Nothing of the refused call blocks the same job later.
    expect(await reserveCredits(db, { workspaceId: ws, jobId, amount: 2 })).toEqual({
      ok: true,
      holdId: `hold_${jobId}`,
    })
    expect(await rowsOf(jobId)).toEqual({ holds: 1, entries: 0 })
    const missing = newId('job')
    await expect(reserveCredits(db, { workspaceId: newId('ws'), jobId: missing, amount: 1 })).rejects.toThrow(
      /not found/,
    )
    expect(await rowsOf(missing)).toEqual({ holds: 0, entries: 0 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('holds and entries still need their workspace: the foreign keys are checked at commit', async () => {
    const ghost = newId('ws')
    const jobId = newId('job')
    let bothInserted = false
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`
          INSERT INTO credit_holds (id, workspace_id, job_id, amount, period)
          VALUES (${`hold_${jobId}`}, ${ghost}, ${jobId}, 1, date_trunc('month', now())::date)`
        await tx.$executeRaw`
          INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount)
          VALUES (${newId('led')}, ${ghost}, ${jobId}, 'reserve', 'available', 'reserved', 1)`
        bothInserted = true // deferred: the statements pass, the commit fails
      }),
    ).rejects.toThrow(/foreign ?key/i)
    expect(bothInserted).toBe(true)
    const [row] = await db.$queryRaw<{ n: number }[]>`
      SELECT (SELECT count(*) FROM credit_holds WHERE job_id = ${jobId}) + (SELECT count(*) FROM ledger_entries
              WHERE job_id = ${jobId})::int AS n`
    expect(Number(row!.n)).toBe(0)
  })

  it('a refusal inside a transaction leaves the transaction usable', async () => {
    const ws = await workspace(2)
    const r = await db.$transaction(async (tx) => {
      const refused = await reserveCredits(tx, { workspaceId: ws, jobId: newId('job'), amount: 3 })
      const held = await reserveCredits(tx, { workspaceId: ws, jobId: newId('job'), amount: 2 })
      return { refused, held }
    })
    expect(r.refused).toEqual({ ok: false, reason: 'insufficient_credits' })
    expect(r.held.ok).toBe(true)
    expect(await getBalance(db, ws)).toMatchObject({ available: 0, reserved: 2 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })
})
