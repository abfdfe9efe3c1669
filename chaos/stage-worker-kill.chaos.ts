// kill -9 a stage worker at random moments while 200 jobs (120 with --quick) go through the pipeline; a new one is
// started each time, as a supervisor or container restart policy would (after 1 s). Afterwards every job is final and
// completed, once: no duplicate documents, stage runs or ledger entries, no drift, and the killed workers' parse
// processes are gone.
import { sleep } from '../bench/lib/kit.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { killRepeatedly } from './lib/killer.ts'
import { startChaosStack } from './lib/stack.ts'
import { invoices, newWorkspace, submitJobs, waitAllFinal } from './lib/workload.ts'

// Chained stages commit together now, so a worker gets through jobs fast: the CI size needs enough of them for the
// kills (every 0.3-1.5 s there) to land while work remains.
const JOBS = QUICK ? 120 : 200
// The CI size stops killing after this many kills (each restart is a cold start of several seconds on 2 cores, so
// unbounded kills mostly measure start-up); the full run kills until the work is done.
const MAX_KILLS = QUICK ? 12 : Number.POSITIVE_INFINITY

await scenario('kill -9 stage worker', async (ctx) => {
  const stack = await startChaosStack('worker-kill')
  ctx.stacks.push(stack)
  const [a, b] = [await newWorkspace(stack.baseUrl, 'A'), await newWorkspace(stack.baseUrl, 'B')]
  // Every fourth document has three pages, so parse and extract take long enough to be killed mid-stage.
  const files = await invoices(JOBS, 4)
  // Random moments: sometimes right after start (relay and sweeps starting), mostly mid-stage.
  const killer = killRepeatedly(stack, 'stage-worker', {
    times: MAX_KILLS,
    pauseMs: () => (QUICK ? 300 + Math.random() * 1200 : 1000 + Math.random() * 5000),
    restartAfterMs: 500,
  })
  const half = Math.floor(JOBS / 2)
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, half), { inFlight: 2 }),
    submitJobs(stack, b, files.slice(half), { inFlight: 2 }),
  ])
  const jobIds = submitted.flatMap((s) => s.jobIds)
  // Keep killing while work remains, then let the last worker finish.
  const deadline = Date.now() + (QUICK ? 240_000 : 900_000)
  for (;;) {
    const left = await stack.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE status::text NOT IN ('completed','completed_with_errors','failed','cancelled','timed_out')`,
    )
    if (left[0]!.n === 0 || Date.now() > deadline) break
    await sleep(500)
  }
  await killer.stop()
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  ctx.recovery.seconds = (performance.now() - killer.lastRestart()) / 1000
  const retried = await stack.query<{ n: number }>('SELECT count(*)::int AS n FROM stage_runs WHERE attempts > 1')
  ctx.detail.push(`${jobIds.length} jobs, ${killer.kills.length} kills, ${retried[0]!.n} stage runs re-attempted`)
  ctx.check('the workers were killed', killer.kills.length >= 3, `${killer.kills.length} kills`)
  ctx.check(
    'no answer ≥ 500 while submitting',
    submitted.every((s) => s.serverErrors.length === 0),
    submitted.flatMap((s) => s.serverErrors).join('; ') || undefined,
  )
  await checkInvariants(ctx, stack, {
    mustComplete: jobIds,
    orphans: killer.kills.flatMap((k) => k.children),
  })
})
