// Credit reservations per second on ONE hot workspace under contention: the ledger's reservation (balance + spending
// cap checked by a conditional UPDATE, hold row, double-entry row) against a bare
// `UPDATE ... SET available = available - x WHERE available >= x` loop, same pool, same concurrency, same run.
// The headline row is reserveCredits, one call per reservation: what a submission alone on its workspace pays (a
// group of one in `submit_jobs`). Beside it, CreditReserver against the same bare UPDATE: concurrent reservations of
// one workspace as one statement and one commit (group commit), as `submit_jobs` reserves for a group of submissions
// (bench/README.md, 2026-11-29 "submissions in groups").
// Knobs: BENCH_CONCURRENCY (16); rounds and seconds per variant follow --quick. Interleaved rounds, medians.
// Target: the ledger's reservation ≥ 0.8× the bare UPDATE. Both sides send their statements as production sends a
// reservation (`submit_jobs` through directQuery): node-postgres on the client's pool, prepared per connection, no
// Prisma in between (directSql, directTransaction). Through Prisma's `$queryRaw` the reservation's client side cost
// about 0.24 ms of CPU against the driver's 0.18, and its `$executeRaw` (the bare UPDATE's) less: the ratio then
// measured Prisma's two calls more than the ledger. The transaction rows pay for BEGIN, COMMIT and the round trips
// the row stays locked over as much as for the ledger, so the same shapes are also measured with the bare UPDATE in
// place of the reservation, and each shape's row is the reservation against the bare UPDATE in that same shape (the
// autocommit row stays the scenario's headline: the bare UPDATE on its own).
// Printed among the references: the bare UPDATE writing the reservation's two rows (hold, entry) in one plain
// statement, what the rows alone cost on the hot row without the ledger's queue.
// Printed beside the autocommit rows: how busy the host's CPU was and PostgreSQL's CPU per operation on each side.
// One hot workspace's operations queue on its row, so the host can sit partly idle while they wait their turn.
import { createPrisma, directSql, directTransaction, type RawSql } from '@quire/db'
import { holdIdFor, newId } from '@quire/domain'
import { CreditReserver, grantCredits, reconcileLedger, reserveCredits } from '@quire/ledger'
import {
  freshDatabase,
  hostCpuBusySince,
  hostCpuTicks,
  median,
  postgresCpu,
  postgresCpuSince,
  QUICK,
  record,
} from './lib/kit.ts'

const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16)
const seconds = QUICK ? 1 : 4
const rounds = QUICK ? 1 : 4
const database = await freshDatabase('ledger')
const databaseName = new URL(database.url).pathname.slice(1)
const db = createPrisma(database.url, { poolMax: concurrency })
const sql = directSql(db)
const BIG = 2_000_000_000

async function hotWorkspace(name: string) {
  const id = newId('ws')
  // A spending cap set (and never reached) so the reservation evaluates the cap branch too.
  await db.workspace.create({ data: { id, name, apiForm: 'B', spendingCap: BIG } })
  await grantCredits(db, { workspaceId: id, amount: BIG })
  return id
}

type Measured = { ops: number; hostBusy: number; postgresMsPerOp: number }

/**
 * Runs `op` from `concurrency` loops for `seconds`: operations per second (successful ones only), the share of the
 * host's CPU that was busy meanwhile, and the PostgreSQL CPU each operation cost. A host that is not busy while one
 * workspace's operations queue on its row is bound by that queue (each one's statement, commit and WAL flush, one
 * after the other), not by the work done beside it.
 */
async function measure(op: () => Promise<boolean>): Promise<Measured> {
  const until = Date.now() + seconds * 1000
  let done = 0
  const loop = async () => {
    while (Date.now() < until) if (await op()) done++
  }
  const host = hostCpuTicks()
  const postgres = postgresCpu(databaseName)
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: concurrency }, loop))
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  return {
    ops: done / s,
    hostBusy: hostCpuBusySince(host),
    postgresMsPerOp: done ? postgresCpuSince(databaseName, postgres) / done : 0,
  }
}

const bareWs = await hotWorkspace('bench-bare')
const groupedWs = await hotWorkspace('bench-ledger-grouped')
const ledgerWs = await hotWorkspace('bench-ledger')
const txWs = await hotWorkspace('bench-ledger-tx')
const jobFirstWs = await hotWorkspace('bench-create-job-reserve-first')
const jobLastWs = await hotWorkspace('bench-create-job-reserve-last')

/** The rest of a createJob-like transaction: the job row and its first outbox message. */
async function jobRows(tx: RawSql, workspaceId: string, jobId: string) {
  await tx.$executeRaw`
    INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, page_count, credits_reserved)
    VALUES (${jobId}, ${workspaceId}, 'parse', 1, '{}'::jsonb, 'queued', 1, 1)`
  await tx.$executeRaw`
    INSERT INTO outbox (queue, name, job_key, payload) VALUES ('bench', 'bench', ${jobId}, ${JSON.stringify({ jobId })}::jsonb)`
}

class Refused extends Error {}

async function bareUpdate(tx: RawSql, workspaceId: string): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE workspaces SET credits_available = credits_available - 1 WHERE id = ${workspaceId} AND credits_available >= 1`
  return n === 1
}

const refRowsWs = await hotWorkspace('bench-reference-bare-rows')
const refBareTxWs = await hotWorkspace('bench-reference-bare-tx')
const refFirstWs = await hotWorkspace('bench-reference-bare-first')
const refLastWs = await hotWorkspace('bench-reference-bare-last')

const reserver = new CreditReserver(sql)
const ONE_CALL = 'ledger reserveCredits one call each, as a submission reserves (autocommit)'
const GROUPED = 'ledger reservations grouped per workspace (CreditReserver, autocommit)'

const variants: Record<string, () => Promise<boolean>> = {
  'bare UPDATE ... WHERE available >= x': () => bareUpdate(sql, bareWs),
  [GROUPED]: async () => (await reserver.reserve({ workspaceId: groupedWs, jobId: newId('job'), amount: 1 })).ok,
  [ONE_CALL]: async () => (await reserveCredits(sql, { workspaceId: ledgerWs, jobId: newId('job'), amount: 1 })).ok,
  'ledger reserveCredits in a transaction (as createJob)': async () =>
    (await directTransaction(db, (tx) => reserveCredits(tx, { workspaceId: txWs, jobId: newId('job'), amount: 1 }))).ok,
  // Where the reservation sits in a transaction decides how long the hot row stays locked.
  'createJob-like transaction, reserve first': () =>
    directTransaction(db, async (tx) => {
      const jobId = newId('job')
      const r = await reserveCredits(tx, { workspaceId: jobFirstWs, jobId, amount: 1 })
      if (!r.ok) throw new Refused()
      await jobRows(tx, jobFirstWs, jobId)
      return true
    }),
  'createJob-like transaction, reserve last': () =>
    directTransaction(db, async (tx) => {
      const jobId = newId('job')
      await jobRows(tx, jobLastWs, jobId)
      const r = await reserveCredits(tx, { workspaceId: jobLastWs, jobId, amount: 1 })
      if (!r.ok) throw new Refused()
      return true
    }),
  // The bare UPDATE writing the row a reservation must leave (its hold, which records it) in the same statement, as
  // plain SQL with no queue: what a reservation that keeps the ledger's rows can reach at best.
  'reference: bare UPDATE with the hold row, one statement (autocommit)': async () => {
    const jobId = newId('job')
    const n = await sql.$executeRaw`
      WITH hold AS (
        INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
        VALUES (${holdIdFor(jobId)}, ${refRowsWs}, ${jobId}, 1, date_trunc('month', now())::date, now()))
      UPDATE workspaces SET credits_available = credits_available - 1 WHERE id = ${refRowsWs} AND credits_available >= 1`
    return n === 1
  },
  // The same shapes with the bare UPDATE instead of reserveCredits: what the transaction rows can reach at best.
  'reference: bare UPDATE in a transaction': () => directTransaction(db, (tx) => bareUpdate(tx, refBareTxWs)),
  'reference: bare UPDATE first in a createJob-like transaction': () =>
    directTransaction(db, async (tx) => {
      if (!(await bareUpdate(tx, refFirstWs))) throw new Refused()
      await jobRows(tx, refFirstWs, newId('job'))
      return true
    }),
  'reference: bare UPDATE last in a createJob-like transaction': () =>
    directTransaction(db, async (tx) => {
      await jobRows(tx, refLastWs, newId('job'))
      if (!(await bareUpdate(tx, refLastWs))) throw new Refused()
      return true
    }),
}

await measure(variants['bare UPDATE ... WHERE available >= x']!) // warm the pool and the caches
const runs: Record<string, number[]> = {}
const diagnostics: Record<string, Measured[]> = {}
for (let r = 0; r < rounds; r++) {
  const names = Object.keys(variants)
  for (const name of r % 2 ? names.reverse() : names) {
    const m = await measure(variants[name]!)
    ;(runs[name] ??= []).push(m.ops)
    ;(diagnostics[name] ??= []).push(m)
  }
}

// Each reservation is compared with the bare UPDATE in the same place: on its own (autocommit, the scenario's row),
// and in each transaction shape with the bare UPDATE where the reservation was (BEGIN, COMMIT and the job's rows cost
// both sides the same, so only the reservation's own cost is in the ratio).
const baselineOf: Record<string, string> = {
  [ONE_CALL]: 'bare UPDATE ... WHERE available >= x',
  [GROUPED]: 'bare UPDATE ... WHERE available >= x',
  'ledger reserveCredits in a transaction (as createJob)': 'reference: bare UPDATE in a transaction',
  'createJob-like transaction, reserve first': 'reference: bare UPDATE first in a createJob-like transaction',
  'createJob-like transaction, reserve last': 'reference: bare UPDATE last in a createJob-like transaction',
}
const bare = median(runs['bare UPDATE ... WHERE available >= x']!)
console.log(
  `  ledger reserve on one hot workspace: ${concurrency} concurrent clients, median of ${rounds} × ${seconds} s`,
)
for (const [name, baselineName] of Object.entries(baselineOf)) {
  const ops = median(runs[name]!)
  const base = median(runs[baselineName]!)
  record({
    scenario: 'ledger',
    metric: baselineName === 'bare UPDATE ... WHERE available >= x' ? name : `${name}, vs the bare UPDATE there`,
    value: ops,
    baseline: base,
    ratio: ops / base,
    unit: 'reservations/s',
    target: '≥ 0.8×',
  })
}
const alongside = (name: string) => {
  const list = diagnostics[name]!
  const busy = median(list.map((m) => m.hostBusy))
  const postgresMs = median(list.map((m) => m.postgresMsPerOp))
  return `host CPU ${(busy * 100).toFixed(0)}% busy, PostgreSQL ${postgresMs.toFixed(3)} ms CPU per operation`
}
console.log(`  alongside, the bare UPDATE: ${alongside('bare UPDATE ... WHERE available >= x')}`)
console.log(`  alongside, CreditReserver: ${alongside(GROUPED)}`)
console.log(`  alongside, reserveCredits (autocommit): ${alongside(ONE_CALL)}`)
for (const [name, list] of Object.entries(runs)) {
  if (!name.startsWith('reference')) continue
  const ops = median(list)
  console.log(`  ${name}: ${ops.toFixed(2)} updates/s (${(ops / bare).toFixed(2)}× the bare UPDATE on its own)`)
}

// The bare loop moved credits without the ledger, so only the ledger's workspaces are expected to reconcile.
let drift = 0
let anomalies = 0
let holds = 0
for (const ws of [groupedWs, ledgerWs, txWs, jobFirstWs, jobLastWs]) {
  const report = await reconcileLedger(db, { workspaceId: ws })
  drift += report.driftCredits
  anomalies += report.holdAnomalies.length
  holds += report.holds
}
console.log(
  `  reconcile of the ledger workspaces after the run: drift ${drift} credits, ${anomalies} hold anomalies, ${holds} holds`,
)
await db.$disconnect()
await database.drop()
if (drift !== 0 || anomalies !== 0) process.exit(1)
