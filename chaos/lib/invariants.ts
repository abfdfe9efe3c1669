// The invariants every scenario checks after its fault (issue 13): every job final, no duplicate documents, stage
// runs, ledger entries or deliveries, reconciliation drift 0 (the check `npm run reconcile` makes), no temporary file
// left, RSS bounded, no app exiting on its own, the outbox drained, and (when the scenario knows secrets) none of them
// in clear in the database or the logs.
import { createPrisma } from '@quire/db'
import { reconcileLedger } from '@quire/ledger'
import { sleep } from '../../bench/lib/kit.ts'
import type { ScenarioContext } from './report.ts'
import { alive } from './servers.ts'
import type { AppName, ChaosStack } from './stack.ts'
import { FINAL_STATUSES, waitAllFinal } from './workload.ts'

/** How long a killed app's child processes may take to notice and exit. */
const ORPHAN_GRACE_MS = 10_000

/** Peak RSS allowed per app's process tree (MB); the stage worker's includes its parse processes. */
export const RSS_LIMIT_MB: Record<AppName, number> = { api: 700, 'stage-worker': 1800, 'webhook-dispatcher': 500 }
/** Peak RSS allowed per app's own process (MB): issue 13's bounds on any single input (API 512 MB, worker 1 GB). */
export const OWN_RSS_LIMIT_MB: Record<AppName, number> = { api: 512, 'stage-worker': 1024, 'webhook-dispatcher': 512 }

export type InvariantOptions = {
  /** How long jobs may take to become final. */
  finalWithinMs?: number
  /** Jobs that must end `completed` (valid documents whose fault must not cost them). */
  mustComplete?: string[]
  /** Processes that must be gone (children of a killed app). */
  orphans?: number[]
  /** Values that must never appear in clear in the database or the logs. */
  secrets?: string[]
  /**
   * Hold each app's own process to OWN_RSS_LIMIT_MB: the issue's bound for any single input (the bombs). Under
   * sustained load the API's heap grows before V8 collects it, so long runs are held to the tree bound only.
   */
  singleInputRss?: boolean
}

export async function checkInvariants(ctx: ScenarioContext, stack: ChaosStack, opts: InvariantOptions = {}) {
  const statuses = await waitAllFinal(stack, opts.finalWithinMs ?? 300_000)
  const notFinal = Object.entries(statuses).filter(([s]) => !FINAL_STATUSES.includes(s))
  ctx.check('every job final', notFinal.length === 0, JSON.stringify(statuses))

  if (opts.mustComplete?.length) {
    const rows = await stack.query<{ id: string; status: string; error_code: string | null; error_message: string }>(
      'SELECT id, status::text AS status, error_code, error_message FROM jobs WHERE id = ANY($1) AND status <> $2',
      [opts.mustComplete, 'completed'],
    )
    ctx.check(
      'every valid job completed',
      rows.length === 0,
      rows.length
        ? `${rows.length} of ${opts.mustComplete.length} not completed, e.g. ${JSON.stringify(rows.slice(0, 3))}`
        : `${opts.mustComplete.length} jobs`,
    )
  }

  const dupDocs = await stack.query(
    `SELECT job_id, file_position, parent_id, pages, count(*)::int AS n FROM documents
     GROUP BY job_id, file_position, parent_id, pages HAVING count(*) > 1 LIMIT 5`,
  )
  ctx.check('no duplicate documents', dupDocs.length === 0, dupDocs.length ? JSON.stringify(dupDocs) : undefined)
  const dupRuns = await stack.query(
    'SELECT job_id, stage, count(*)::int AS n FROM stage_runs GROUP BY job_id, stage HAVING count(*) > 1 LIMIT 5',
  )
  ctx.check('no duplicate stage runs', dupRuns.length === 0, dupRuns.length ? JSON.stringify(dupRuns) : undefined)
  const dupLedger = await stack.query(
    `SELECT job_id, kind, count(*)::int AS n FROM ledger_entries WHERE job_id IS NOT NULL
     GROUP BY job_id, kind HAVING count(*) > 1 LIMIT 5`,
  )
  ctx.check(
    'no duplicate ledger entries',
    dupLedger.length === 0,
    dupLedger.length ? JSON.stringify(dupLedger) : undefined,
  )
  const dupDeliveries = await stack.query(
    `SELECT event_id, webhook_id, count(*)::int AS n FROM webhook_deliveries
     GROUP BY event_id, webhook_id HAVING count(*) > 1 LIMIT 5`,
  )
  ctx.check(
    'no duplicate deliveries',
    dupDeliveries.length === 0,
    dupDeliveries.length ? JSON.stringify(dupDeliveries) : undefined,
  )

  const db = createPrisma(stack.databaseUrl)
  try {
    const report = await reconcileLedger(db)
    ctx.check(
      'reconciliation drift 0',
      report.driftCredits === 0 && report.holdAnomalies.length === 0 && report.maxSettlesPerJob <= 1,
      `drift ${report.driftCredits}, hold anomalies ${report.holdAnomalies.length}, max settles per job ` +
        `${report.maxSettlesPerJob}${report.holdAnomalies.length ? `: ${JSON.stringify(report.holdAnomalies.slice(0, 3))}` : ''}`,
    )
  } finally {
    await db.$disconnect()
  }

  // The outbox relay runs every few hundred ms; what is still pending after 30 s is stuck.
  let pending = 0
  for (let i = 0; i < 60; i++) {
    pending = (
      await stack.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE dispatched_at IS NULL')
    )[0]!.n
    if (pending === 0) break
    await sleep(500)
  }
  ctx.check('outbox drained', pending === 0, pending ? `${pending} rows still pending` : undefined)

  // Temporary files are deleted before a response is sent or when a stage ends; give stragglers a moment.
  let left: string[] = []
  for (let i = 0; i < 10; i++) {
    left = stack.leftoverFiles()
    if (left.length === 0) break
    await sleep(500)
  }
  ctx.check(
    'no temp files left',
    left.length === 0,
    left.length ? `${left.length}: ${left.slice(0, 5).join(', ')}` : undefined,
  )

  const peaks = stack.peakRss()
  const over = (Object.keys(RSS_LIMIT_MB) as AppName[]).filter((a) => peaks[a] > RSS_LIMIT_MB[a])
  ctx.check(
    'RSS bounded',
    over.length === 0,
    (Object.keys(peaks) as AppName[]).map((a) => `${a} ${Math.round(peaks[a])}/${RSS_LIMIT_MB[a]} MB`).join(', '),
  )

  if (opts.singleInputRss) {
    const own = stack.peakOwnRss()
    const ownOver = (Object.keys(OWN_RSS_LIMIT_MB) as AppName[]).filter((a) => own[a] > OWN_RSS_LIMIT_MB[a])
    ctx.check(
      "RSS of each app's own process within the single-input bound",
      ownOver.length === 0,
      (Object.keys(own) as AppName[]).map((a) => `${a} ${Math.round(own[a])}/${OWN_RSS_LIMIT_MB[a]} MB`).join(', '),
    )
  }

  ctx.check(
    'no app exited on its own',
    stack.unexpectedExits.length === 0,
    stack.unexpectedExits.length ? stack.unexpectedExits.join('; ') : undefined,
  )

  if (opts.orphans) {
    // A child notices its parent's death when its IPC channel closes, then stops its OCR engine and exits: allow it
    // that, as an operator's process supervisor would, but not to live on.
    const until = Date.now() + ORPHAN_GRACE_MS
    let left = opts.orphans.filter(alive)
    while (left.length > 0 && Date.now() < until) {
      await sleep(250)
      left = left.filter(alive)
    }
    ctx.check(
      'no orphaned child processes',
      left.length === 0,
      left.length
        ? `still running ${ORPHAN_GRACE_MS / 1000} s after the checks began: ${left.join(', ')}`
        : `${opts.orphans.length} children of killed apps gone`,
    )
  }

  if (opts.secrets?.length) await checkSecrets(ctx, stack, opts.secrets)
}

/** Every row of every table, and every app log line, searched for each secret in clear. */
export async function checkSecrets(ctx: ScenarioContext, stack: ChaosStack, secrets: string[]) {
  const tables = await stack.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  )
  const found: string[] = []
  for (const { table_name } of tables) {
    const rows = await stack.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)
    const text = rows.map((r) => r.row).join('\n')
    for (const s of secrets) if (text.includes(s)) found.push(`${s.slice(0, 10)}… in table ${table_name}`)
  }
  const logs = stack.logText()
  for (const s of secrets) if (logs.includes(s)) found.push(`${s.slice(0, 10)}… in the logs`)
  ctx.check(
    'no secret in clear in the database or logs',
    found.length === 0,
    found.length ? found.join('; ') : `${secrets.length} secrets, ${tables.length} tables, ${logs.length} log bytes`,
  )
}
