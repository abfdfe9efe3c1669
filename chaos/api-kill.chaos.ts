// kill -9 the API 5 times (12 in the full run) at random moments while clients upload and submit jobs (80 with
// --quick, 160 in the full run); a new one is started each time after 0.5 s, as a supervisor or container restart
// policy would. Clients retry a refused or reset connection, as they should. Afterwards: every job the API accepted
// is final and completed (a retried submission whose first answer was lost is a second job, and it completes too),
// credits reconcile, no upload a killed API was receiving is left behind once the restarted API has swept, and no
// stored file of a submission that never committed is left once the stage worker's blob sweep has run.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { sleep } from '../bench/lib/kit.ts'
import { checkInvariants } from './lib/invariants.ts'
import { killRepeatedly } from './lib/killer.ts'
import { QUICK, scenario } from './lib/report.ts'
import { filesUnder, startChaosStack } from './lib/stack.ts'
import { invoices, newWorkspace, submitJobs, waitAllFinal } from './lib/workload.ts'

const JOBS = QUICK ? 80 : 160
// Always this many kills, however fast the submissions go (a restart takes seconds; on a quick machine the jobs
// could all be in before a third kill). The submitters pace themselves so the load spans the kills.
const KILLS = QUICK ? 5 : 12
const PACE_MS = QUICK ? 800 : 1000
// Stored files no live job owns are deleted at this age (QUIRE_BLOB_SWEEP_MIN_AGE_MS): far above the milliseconds
// between storing a submission's files and committing it, even on a loaded machine.
const BLOB_MIN_AGE_MS = 10_000

await scenario('kill -9 API', async (ctx) => {
  // Uploads a killed API left are swept by the next one once they are older than this (QUIRE_UPLOAD_STALE_MS).
  const stack = await startChaosStack('api-kill', {
    env: {
      QUIRE_UPLOAD_STALE_MS: '2000',
      QUIRE_BLOB_SWEEP_MIN_AGE_MS: String(BLOB_MIN_AGE_MS),
      QUIRE_BLOB_SWEEP_INTERVAL_MS: '1000',
    },
  })
  ctx.stacks.push(stack)
  const [a, b] = [await newWorkspace(stack.baseUrl, 'A'), await newWorkspace(stack.baseUrl, 'B')]
  // Every third document has three pages: larger uploads, so some kills land mid-body.
  const files = await invoices(JOBS, 3)
  const killer = killRepeatedly(stack, 'api', {
    times: KILLS,
    pauseMs: () => (QUICK ? 400 + Math.random() * 1200 : 800 + Math.random() * 3000),
    restartAfterMs: 500,
  })
  const half = Math.floor(JOBS / 2)
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, half), { inFlight: 3, paceMs: PACE_MS }),
    submitJobs(stack, b, files.slice(half), { inFlight: 3, paceMs: PACE_MS }),
  ])
  await killer.finished
  const accepted = submitted.flatMap((s) => s.jobIds)
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  ctx.recovery.seconds = (performance.now() - killer.lastRestart()) / 1000

  const jobs = await stack.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')
  const retried = submitted.reduce((n, s) => n + s.retried, 0)
  ctx.detail.push(
    `${accepted.length} jobs accepted, ${jobs[0]!.n} in the database, ${killer.kills.length} kills, ` +
      `${retried} submissions retried`,
  )
  ctx.check('the API was killed', killer.kills.length === KILLS, `${killer.kills.length} kills`)
  ctx.check('kills landed while clients were submitting', retried > 0, `${retried} submissions retried`)
  ctx.check('every file was accepted', accepted.length === JOBS, `${accepted.length} of ${JOBS}`)
  ctx.check(
    'no answer ≥ 500 while submitting',
    submitted.every((s) => s.serverErrors.length === 0),
    submitted.flatMap((s) => s.serverErrors).join('; ') || undefined,
  )

  // Files stored for a submission whose statement never committed (the API killed between storing the upload and
  // committing the job) belong to no job; the window is milliseconds per submission, so most runs make none. One such
  // file is planted as well, so the sweep is always put to the test.
  const blobDir = stack.env.QUIRE_BLOB_DIR!
  const planted = plantUncommittedFile(blobDir)
  const unowned = async () => {
    const keys = new Set(
      // A job's files: its job_files rows, or the one a lone submission keeps in the job row.
      (
        await stack.query<{ blob_key: string }>(
          'SELECT blob_key FROM job_files UNION ALL SELECT blob_key FROM jobs WHERE blob_key IS NOT NULL',
        )
      ).map((r) => r.blob_key),
    )
    return filesUnder(blobDir).filter((f) => !keys.has(path.relative(blobDir, f)))
  }
  const before = await unowned()
  const sweptBy = Date.now() + BLOB_MIN_AGE_MS + 20_000
  let left = before
  while (left.length > 0 && Date.now() < sweptBy) {
    await sleep(500)
    left = await unowned()
  }
  ctx.detail.push(`${before.filter((f) => f !== planted).length} stored files of uncommitted submissions, 1 planted`)
  ctx.check(
    'stored files without a job are swept',
    left.length === 0 && !existsSync(planted),
    left.map((f) => path.relative(blobDir, f)).join(', ') || undefined,
  )

  // The last API sweeps what the killed ones were receiving (stale after 2 s, swept at start and periodically).
  await sleep(3000)
  await stack.kill('api')
  await stack.start('api')
  await sleep(1000)
  await checkInvariants(ctx, stack, { mustComplete: accepted })
})

/** A file as a submission killed after storing its upload leaves it: an hour old, under a job id never committed. */
function plantUncommittedFile(blobDir: string): string {
  const jobId = `job_${randomBytes(12).toString('hex')}`
  const file = path.join(blobDir, 'ws_killed', jobId.slice(-2), `${jobId}-0`)
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, '%PDF-1.4 stored, never committed')
  const hourAgo = new Date(Date.now() - 3_600_000)
  utimesSync(file, hourAgo, hourAgo)
  return file
}
