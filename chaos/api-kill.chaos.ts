// kill -9 the API 5 times (12 in the full run) at random moments while clients upload and submit jobs (80 with
// --quick, 160 in the full run); a new one is started each time after 0.5 s, as a supervisor or container restart
// policy would. Clients retry a refused or reset connection, as they should. Afterwards: every job the API accepted
// is final and completed (a retried submission whose first answer was lost is a second job, and it completes too),
// credits reconcile, no upload a killed API was receiving is left behind once the restarted API has swept. Stored
// files of submissions that never committed are counted (nothing removes them yet).
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { sleep } from '../bench/lib/kit.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { startChaosStack } from './lib/stack.ts'
import { invoices, newWorkspace, submitJobs, waitAllFinal } from './lib/workload.ts'

const JOBS = QUICK ? 80 : 160
// Always this many kills, however fast the submissions go (a restart takes seconds; on a quick machine the jobs
// could all be in before a third kill). The submitters pace themselves so the load spans the kills.
const KILLS = QUICK ? 5 : 12
const PACE_MS = QUICK ? 800 : 1000

await scenario('kill -9 API', async (ctx) => {
  // Uploads a killed API left are swept by the next one once they are older than this (QUIRE_UPLOAD_STALE_MS).
  const stack = await startChaosStack('api-kill', { env: { QUIRE_UPLOAD_STALE_MS: '2000' } })
  ctx.stacks.push(stack)
  const [a, b] = [await newWorkspace(stack.baseUrl, 'A'), await newWorkspace(stack.baseUrl, 'B')]
  // Every third document has three pages: larger uploads, so some kills land mid-body.
  const files = await invoices(JOBS, 3)
  const kills: { pid: number; children: number[] }[] = []
  let lastKillEnd = performance.now()
  const killer = (async () => {
    for (let i = 0; i < KILLS; i++) {
      await sleep(QUICK ? 400 + Math.random() * 1200 : 800 + Math.random() * 3000)
      kills.push(await stack.kill('api'))
      await sleep(500)
      await stack.start('api')
      lastKillEnd = performance.now()
    }
  })()
  const half = Math.floor(JOBS / 2)
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, half), { inFlight: 3, paceMs: PACE_MS }),
    submitJobs(stack, b, files.slice(half), { inFlight: 3, paceMs: PACE_MS }),
  ])
  await killer
  const accepted = submitted.flatMap((s) => s.jobIds)
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  ctx.recovery.seconds = (performance.now() - lastKillEnd) / 1000

  const jobs = await stack.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')
  const retried = submitted.reduce((n, s) => n + s.retried, 0)
  ctx.detail.push(
    `${accepted.length} jobs accepted, ${jobs[0]!.n} in the database, ${kills.length} kills, ` +
      `${retried} submissions retried`,
  )
  ctx.check('the API was killed', kills.length === KILLS, `${kills.length} kills`)
  ctx.check('kills landed while clients were submitting', retried > 0, `${retried} submissions retried`)
  ctx.check('every file was accepted', accepted.length === JOBS, `${accepted.length} of ${JOBS}`)
  ctx.check(
    'no answer ≥ 500 while submitting',
    submitted.every((s) => s.serverErrors.length === 0),
    submitted.flatMap((s) => s.serverErrors).join('; ') || undefined,
  )

  // Files stored for a submission whose statement never committed (the API killed between storing the upload and
  // committing the job) belong to no job. Nothing removes them yet, so they are counted in the detail, not checked:
  // the window is a few milliseconds per submission and most runs find none.
  const blobDir = stack.env.QUIRE_BLOB_DIR!
  const keys = new Set(
    (await stack.query<{ blob_key: string }>('SELECT blob_key FROM job_files')).map((r) => r.blob_key),
  )
  const unowned = listFiles(blobDir).filter((f) => !keys.has(path.relative(blobDir, f)))
  ctx.detail.push(`${unowned.length} stored files without a job`)

  // The last API sweeps what the killed ones were receiving (stale after 2 s, swept at start and periodically).
  await sleep(3000)
  await stack.kill('api')
  await stack.start('api')
  await sleep(1000)
  await checkInvariants(ctx, stack, { mustComplete: accepted })
})

function listFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    let entries: import('node:fs').Dirent[] = []
    try {
      entries = readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(p)
    }
  }
  walk(dir)
  return out
}
