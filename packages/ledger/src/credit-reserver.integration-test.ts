// CreditReserver groups the reservations that arrive while one of the same workspace is under way into one call of
// `ledger_reserve_credits_batch` (migration `*_ledger_reserve_credits_batch`). What grouping must not change: each
// job decided on its own by its conditional UPDATE (balance, spending cap), in order, a job held at most once, a
// refusal explained, nothing visible of a refused job; what it must add: one transaction for a batch, and a batch that
// fails as a whole retried one job at a time so that one job's error stays its own.
import { createPrisma, type Db, directSql } from '@quire/db'
import { newId } from '@quire/domain'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CreditReserver } from './credit-reserver.ts'
import { getBalance, grantCredits } from './ledger.ts'
import { reconcileLedger } from './reconcile.ts'

let db: Db
let other: Db
beforeAll(() => {
  db = createPrisma(process.env.DATABASE_URL!, { poolMax: 8 })
  other = createPrisma(process.env.DATABASE_URL!, { poolMax: 8 }) // a second process's pool
})
afterAll(async () => Promise.all([db.$disconnect(), other.$disconnect()]))

async function workspace(credits: number, spendingCap: number | null = null) {
  const id = newId('ws')
  await db.workspace.create({ data: { id, name: id, apiForm: 'B', spendingCap } })
  if (credits) await grantCredits(db, { workspaceId: id, amount: credits })
  return id
}

/** How many transactions wrote the workspace's holds (a batch writes all of its holds in one). */
async function holdTransactions(workspaceId: string) {
  const [row] = await db.$queryRaw<{ holds: number; transactions: number }[]>`
    SELECT count(*)::int AS holds, count(DISTINCT xmin::text)::int AS transactions
    FROM credit_holds WHERE workspace_id = ${workspaceId}`
  return row!
}

async function rowsOf(jobId: string) {
  const [row] = await db.$queryRaw<{ holds: number; entries: number }[]>`
    SELECT (SELECT count(*)::int FROM credit_holds WHERE job_id = ${jobId}) AS holds,
           (SELECT count(*)::int FROM ledger_entries WHERE job_id = ${jobId}) AS entries`
  return row!
}

describe('CreditReserver (group commit of reservations) on real PostgreSQL', () => {
  it('racers for the last credits from two processes: exactly floor(balance / cost) held, in shared transactions', async () => {
    const ws = await workspace(50)
    const mine = new CreditReserver(directSql(db))
    const theirs = new CreditReserver(directSql(other))
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? mine : theirs).reserve({ workspaceId: ws, jobId: newId('job'), amount: 3 }),
      ),
    )
    expect(results.filter((r) => r.ok)).toHaveLength(16)
    expect(new Set(results.flatMap((r) => (r.ok ? [] : [r.reason])))).toEqual(new Set(['insufficient_credits']))
    expect(await getBalance(db, ws)).toMatchObject({ available: 2, reserved: 48 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
    // Grouped: 16 holds were written by fewer transactions than holds.
    const { holds, transactions } = await holdTransactions(ws)
    expect(holds).toBe(16)
    expect(transactions).toBeLessThan(holds)
  })

  it('each job of one batch is decided on its own, in order: balance, spending cap, a job sent twice', async () => {
    const ws = await workspace(100, 10)
    const reserver = new CreditReserver(directSql(db))
    const first = reserver.reserve({ workspaceId: ws, jobId: newId('job'), amount: 1 }) // goes alone, at once
    const twice = newId('job')
    // These arrive while the first is under way: one batch, decided in this order against the cap of 10.
    const batch = [
      { jobId: newId('job'), amount: 5 }, // 6 used
      { jobId: newId('job'), amount: 6 }, // would be 12: refused by the cap
      { jobId: twice, amount: 3 }, // 9 used
      { jobId: twice, amount: 3 }, // the same job again: its hold, not a second one
      { jobId: newId('job'), amount: 1 }, // 10 used: exactly the cap
      { jobId: newId('job'), amount: 1 }, // refused
    ].map((r) => reserver.reserve({ workspaceId: ws, ...r }))
    const results = await Promise.all([first, ...batch])
    expect(results.map((r) => (r.ok ? 'held' : r.reason))).toEqual([
      'held',
      'held',
      'spending_cap',
      'held',
      'held',
      'held',
      'spending_cap',
    ])
    expect(results[3]).toEqual({ ok: true, holdId: `hold_${twice}` })
    expect(results[4]).toEqual(results[3])
    expect(await rowsOf(twice)).toEqual({ holds: 1, entries: 0 })
    expect(await getBalance(db, ws)).toMatchObject({ available: 90, reserved: 10 })
    expect(await holdTransactions(ws)).toEqual({ holds: 4, transactions: 2 })
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('a refused job of a batch leaves neither hold nor entry, and a missing workspace is an error', async () => {
    const ws = await workspace(4)
    const reserver = new CreditReserver(directSql(db))
    const jobs = Array.from({ length: 4 }, () => newId('job'))
    const results = await Promise.all(jobs.map((jobId) => reserver.reserve({ workspaceId: ws, jobId, amount: 2 })))
    expect(results.filter((r) => r.ok)).toHaveLength(2)
    for (const [i, r] of results.entries()) {
      expect(await rowsOf(jobs[i]!)).toEqual({ holds: r.ok ? 1 : 0, entries: 0 })
    }
    const ghost = newId('ws')
    const missing = Array.from({ length: 3 }, () =>
      reserver.reserve({ workspaceId: ghost, jobId: newId('job'), amount: 1 }),
    )
    // Every expectation attached at once: a rejection that came before its handler would be an unhandled one.
    await Promise.all(missing.map((m) => expect(m).rejects.toThrow(/not found/)))
    expect(await reconcileLedger(db, { workspaceId: ws })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('a batch that fails as a whole is retried one job at a time: the failing job alone gets the error', async () => {
    const ws = await workspace(100)
    // A damaged ledger, as a trigger that fails one job's hold: an error of the statement, not a refusal.
    const damaged = newId('job')
    const trigger = `damaged_${damaged}`
    await db.$executeRawUnsafe(
      `CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'damaged hold'; END $$`,
    )
    await db.$executeRawUnsafe(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON credit_holds FOR EACH ROW WHEN (NEW.job_id = '${damaged}')
       EXECUTE FUNCTION ${trigger}()`,
    )
    try {
      const reserver = new CreditReserver(directSql(db))
      const first = reserver.reserve({ workspaceId: ws, jobId: newId('job'), amount: 1 })
      const healthy = [newId('job'), newId('job'), newId('job')]
      const inBatch = [healthy[0]!, damaged, healthy[1]!, healthy[2]!].map((jobId) =>
        reserver.reserve({ workspaceId: ws, jobId, amount: 2 }).then(
          (r) => ({ jobId, r }),
          (error: Error) => ({ jobId, error }),
        ),
      )
      expect((await first).ok).toBe(true)
      const outcomes = await Promise.all(inBatch)
      for (const o of outcomes) {
        if (o.jobId === damaged) expect('error' in o && String(o.error)).toMatch(/damaged hold/)
        else expect('r' in o && o.r).toEqual({ ok: true, holdId: `hold_${o.jobId}` })
      }
      for (const jobId of healthy) expect(await rowsOf(jobId)).toEqual({ holds: 1, entries: 0 })
      expect(await rowsOf(damaged)).toEqual({ holds: 0, entries: 0 })
      // 1 + 3 × 2 reserved.
      expect(await getBalance(db, ws)).toMatchObject({ available: 93, reserved: 7 })
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER ${trigger} ON credit_holds`)
      await db.$executeRawUnsafe(`DROP FUNCTION ${trigger}()`)
    }
  })

  it('a hold of 0 credits moves the spending period to its month, alone or in a batch', async () => {
    // The period of a workspace's counter is the month of its last hold: a new month starts the counter at 0.
    const periodAfter = async (sql: string, ws: string, jobId: string) => {
      await db.$executeRaw`UPDATE workspaces SET spend_period = '2031-01-01', spend_period_used = 5 WHERE id = ${ws}`
      await db.$executeRawUnsafe(sql, ws, jobId, `hold_${jobId}`)
      const [row] = await db.$queryRaw<{ period: string; used: number }[]>`
        SELECT spend_period::text AS period, spend_period_used::int AS used FROM workspaces WHERE id = ${ws}`
      return row
    }
    const alone = await workspace(10)
    const batch = await workspace(10)
    const expected = { period: '2031-03-01', used: 0 }
    expect(
      await periodAfter(
        `SELECT ledger_reserve_credits($1, $2, $3, 0, '2031-03-10T12:00:00Z', NULL)`,
        alone,
        newId('job'),
      ),
    ).toEqual(expected)
    expect(
      await periodAfter(
        `SELECT ledger_reserve_credits_batch($1, ARRAY[$2], ARRAY[$3], ARRAY[0], NULL, '2031-03-10T12:00:00Z')`,
        batch,
        newId('job'),
      ),
    ).toEqual(expected)
  })

  it('amounts are checked before anything is sent', () => {
    const reserver = new CreditReserver(directSql(db))
    expect(() => reserver.reserve({ workspaceId: 'ws', jobId: 'job', amount: -1 })).toThrow(RangeError)
  })
})
