// `npm run reconcile [-- --json] [-- --workspace <id>]`: recomputes every credit balance from the ledger's entries
// and holds and reports drift. Exit code 0 when the ledger is consistent, 1 when anything drifted, 2 when the
// database was never migrated.
// Uses DATABASE_URL, else the local database `npm start` uses (starting the local PostgreSQL if needed).
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createPrisma } from '@quire/db'
import { reconcileLedger, type ReconcileReport } from '@quire/ledger'

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, workspace: { type: 'string' } },
})

type Services = { databaseUrl: string; stop: () => Promise<void> }

async function database(): Promise<Services> {
  if (process.env.DATABASE_URL) return { databaseUrl: process.env.DATABASE_URL, stop: async () => {} }
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dev', 'services.mjs')
  const services = await import(pathToFileURL(file).href)
  return services.ensureServices({
    redis: false,
    allowInstall: false,
    log: (m: string) => console.error(`[services] ${m}`),
  })
}

function print(report: ReconcileReport) {
  console.log(
    `ledger: ${report.workspaces} workspaces, ${report.holds} holds, ${report.entries} entries; ` +
      `drift ${report.driftCredits} credits; ${report.holdAnomalies.length} hold anomalies; ` +
      `max settles per job ${report.maxSettlesPerJob}`,
  )
  for (const d of report.drifts) {
    console.log(
      `  DRIFT ${d.workspaceId} ${d.check}: stored ${d.stored}, computed ${d.computed} (${d.stored - d.computed})`,
    )
  }
  for (const a of report.holdAnomalies) {
    console.log(
      `  HOLD ${a.reason} ${a.workspaceId} job ${a.jobId} ${a.status ?? '(no hold)'} amount ${a.amount} posted ${a.posted}: ${JSON.stringify(a.entries)}`,
    )
  }
}

const services = await database()
const db = createPrisma(services.databaseUrl)
let code = 1
try {
  const report = await reconcileLedger(db, { workspaceId: args.workspace })
  if (args.json) console.log(JSON.stringify(report, null, 2))
  else print(report)
  code = report.driftCredits === 0 && report.holdAnomalies.length === 0 && report.maxSettlesPerJob <= 1 ? 0 : 1
} catch (err) {
  // A database Quire never migrated (SQLSTATE 42P01, undefined table) has no ledger to check: say so, not a stack.
  if (!/42P01|TableDoesNotExist/.test(String((err as Error).message) + JSON.stringify(err))) throw err
  console.error('reconcile: this database has no Quire tables; run `npm start` (or the migrate service) first')
  code = 2
} finally {
  await db.$disconnect()
  await services.stop()
}
process.exit(code)
