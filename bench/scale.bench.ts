// scale: OCR-heavy throughput (scanned one-page PDFs) with two stage-worker processes against one API, versus one
// stage-worker process. Each worker parses in one child process with one OCR worker, so one worker process is one
// core's worth of OCR: the ratio shows how throughput grows when an operator adds worker processes (or containers).
// Each worker starts warm (QUIRE_PARSE_WARM_START=ocr, as an OCR-heavy deployment that adds workers under load runs):
// it takes its first job once its parse process has loaded its OCR engine and read a first scanned page, as the loop
// below starts timing only after its own warm-up. Interleaved rounds, medians. Target: 2 workers ≥ 1.7× one.
// Printed beside the row, as a reference: the machine's own ceiling, the plain extraction loop over the same pages in
// two processes side by side against one (bench/baselines/extraction-loop.ts; no queue, database or HTTP).
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { scannedPagePdf } from './lib/documents.ts'
import {
  benchWorkspace,
  cpuMs,
  median,
  postgresCpu,
  postgresCpuSince,
  QUICK,
  record,
  ROOT,
  roundsWithin,
  startApps,
  stopChild,
  treeCpuMs,
} from './lib/kit.ts'
import { runJobs } from './lib/submit-jobs.ts'

// The quick run measures once, without rounds (below); four pages, so that each of two workers gets some (with two,
// the first worker's two job slots took both).
const ROUNDS = QUICK ? 0 : 3
const FILES = QUICK ? 4 : 12
/**
 * The full run's rounds stop early when the next would not fit: a round (three warm worker starts, two timed
 * batches, the plain loops) takes 60-90 s on a slow 2-core host, where two rounds are run instead of three.
 */
const ROUNDS_SECONDS = 200
const WORKER_ENV = { QUIRE_PARSE_PROCESSES: '1', QUIRE_OCR_WORKERS: '1', QUIRE_PARSE_WARM_START: 'ocr' }

const apps = await startApps('scale', { apps: ['api', 'webhook-dispatcher'] })
try {
  const scanned = await scannedPagePdf()
  const files = Array.from({ length: FILES }, () => scanned)
  const withWorkers = async (n: number) => {
    const workers = await apps.startMany('stage-worker', n, WORKER_ENV)
    try {
      return await measure(workers)
    } finally {
      await Promise.all(workers.map(stopChild))
    }
  }
  /** Documents per second of the running `workers` over FILES scanned pages. */
  const measure = async (workers: ChildProcess[]) => {
    const n = workers.length
    const ws = await benchWorkspace(apps.baseUrl, 'B')
    // Where the time goes: CPU per document of the workers (their parse processes included), the API and
    // PostgreSQL, against the wall time: how much of the machine's two cores the run used.
    const database = new URL(apps.databaseUrl).pathname.slice(1)
    const before = {
      workers: workers.map((w) => treeCpuMs(w.pid!)),
      api: cpuMs(apps.pid('api')),
      pg: postgresCpu(database),
    }
    const { seconds } = await runJobs({ ...apps, ...ws, files, inFlight: 8 })
    const per = (ms: number) => `${(ms / FILES).toFixed(0)} ms`
    const workerMs = workers.map((w, i) => treeCpuMs(w.pid!) - before.workers[i]!)
    const total =
      workerMs.reduce((a, b) => a + b, 0) + cpuMs(apps.pid('api')) - before.api + postgresCpuSince(database, before.pg)
    console.log(
      `  scale · ${n} worker${n > 1 ? 's' : ''}: ${(FILES / seconds).toFixed(2)} docs/s; CPU per document: ` +
        `workers ${workerMs.map(per).join(' + ')}, API ${per(cpuMs(apps.pid('api')) - before.api)}, ` +
        `PostgreSQL ${per(postgresCpuSince(database, before.pg))}; cores busy ${(total / 1000 / seconds).toFixed(2)} of 2`,
    )
    return FILES / seconds
  }
  /** Documents per second of `n` plain extraction loops side by side, each over FILES / n of the pages. */
  const loops = async (n: number) => {
    const children = Array.from({ length: n }, () =>
      spawn(
        process.execPath,
        ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'bench', 'baselines', 'extraction-loop.ts')],
        { cwd: ROOT, env: { ...process.env, BENCH_COUNT: String(FILES / n) }, stdio: ['pipe', 'pipe', 'inherit'] },
      ),
    )
    const lines = children.map((c) => createInterface({ input: c.stdout! })[Symbol.asyncIterator]())
    for (const line of lines) if ((await line.next()).value !== 'ready') throw new Error('extraction loop: no ready')
    for (const c of children) c.stdin!.write('go\n') // all timed loops start together, after every warm-up
    const seconds = await Promise.all(
      lines.map(async (l) => (JSON.parse((await l.next()).value) as { seconds: number }).seconds),
    )
    return FILES / Math.max(...seconds)
  }
  // No warm-up round: a worker reads its files (modules, the OCR model) and its first scanned page while it starts,
  // which is not timed.
  const one: number[] = []
  const two: number[] = []
  const loopOne: number[] = []
  const loopTwo: number[] = []
  // The loop's ceiling is a reference printed beside the row; the quick run leaves it out (two more process starts).
  const ceiling = !QUICK
  if (QUICK) {
    // One warm start of two workers instead of three (a warm start is most of the quick run's time here): both
    // measured together, then one of them alone once the other has stopped.
    const workers = await apps.startMany('stage-worker', 2, WORKER_ENV)
    try {
      two.push(await measure(workers))
      await stopChild(workers[1]!)
      one.push(await measure([workers[0]!]))
    } finally {
      await Promise.all(workers.map(stopChild))
    }
  }
  for (const round of roundsWithin({
    label: 'scale',
    min: Math.min(2, ROUNDS),
    max: ROUNDS,
    seconds: ROUNDS_SECONDS,
  })) {
    if (round % 2) {
      two.push(await withWorkers(2))
      one.push(await withWorkers(1))
      if (ceiling) {
        loopTwo.push(await loops(2))
        loopOne.push(await loops(1))
      }
    } else {
      one.push(await withWorkers(1))
      two.push(await withWorkers(2))
      if (ceiling) {
        loopOne.push(await loops(1))
        loopTwo.push(await loops(2))
      }
    }
  }
  console.log(
    ceiling
      ? `  scale · the machine's ceiling: the plain extraction loop, 2 processes ${median(loopTwo).toFixed(2)} docs/s ` +
          `vs 1 ${median(loopOne).toFixed(2)} docs/s (${(median(loopTwo) / median(loopOne)).toFixed(2)}×)`
      : `  scale · the machine's ceiling (the plain extraction loop in 2 processes vs 1): measured in the full run only`,
  )
  const value = median(two)
  const baseline = median(one)
  record({
    scenario: 'scale',
    metric: 'scanned pages, 2 stage-worker processes vs 1',
    value,
    baseline,
    ratio: value / baseline,
    unit: 'documents/s',
    target: '≥ 1.7×',
  })
} finally {
  await apps.stop()
}
