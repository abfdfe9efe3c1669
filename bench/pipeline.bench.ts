// pipeline: documents through every stage to `completed` with one stage-worker process (and the API and dispatcher
// beside it), against the same extraction calls in a plain loop in one process (bench/lib/loop-baseline.ts).
// Two workloads: one-page text PDFs (documents/s; target ≥ 0.5× the loop), and a mix of 10-page text PDFs and
// scanned pages that need OCR (pages/s; target ≥ 0.85×). Interleaved rounds, medians.
import { onePageTextPdf, scannedPagePdf, tenPageTextPdf } from './lib/documents.ts'
import { benchWorkspace, median, QUICK, record, roundsWithin, startApps } from './lib/kit.ts'
import { extractionLoop } from './lib/loop-baseline.ts'
import { runJobs } from './lib/submit-jobs.ts'

const ROUNDS = QUICK ? 1 : 3
/** Each workload's rounds stop early when the next would not fit (its rounds take 5-20 s on a slow 2-core host). */
const ROUNDS_SECONDS = 60
const apps = await startApps('pipeline', { apps: ['api', 'stage-worker', 'webhook-dispatcher'] })
try {
  const onePage = await onePageTextPdf()
  const tenPages = await tenPageTextPdf()
  const scanned = await scannedPagePdf()
  const workloads = [
    {
      metric: 'one-page text PDFs',
      files: Array.from({ length: QUICK ? 20 : 100 }, () => onePage),
      unit: 'documents/s',
      target: '≥ 0.5×',
      per: (files: number) => files,
    },
    {
      metric: 'mix: 10-page text PDFs + scanned pages (OCR)',
      files: Array.from({ length: QUICK ? 2 : 12 }, (_, i) => (i % 2 ? scanned : tenPages)),
      unit: 'pages/s',
      target: '≥ 0.85×',
      per: (files: number) => Math.ceil(files / 2) * 10 + Math.floor(files / 2),
    },
  ]
  // Warm-up: a few jobs through every stage, and the loop once (OCR engine start, JIT).
  const warm = await benchWorkspace(apps.baseUrl, 'B')
  await runJobs({ ...apps, ...warm, files: [onePage, onePage, scanned] })
  await extractionLoop([onePage, scanned])

  for (const w of workloads) {
    const quire: number[] = []
    const loop: number[] = []
    const units = w.per(w.files.length)
    const rounds = roundsWithin({ label: `pipeline · ${w.metric}`, min: 1, max: ROUNDS, seconds: ROUNDS_SECONDS })
    for (const round of rounds) {
      const pipelineSide = async () => {
        const ws = await benchWorkspace(apps.baseUrl, 'B')
        quire.push(units / (await runJobs({ ...apps, ...ws, files: w.files })).seconds)
      }
      const loopSide = async () => {
        loop.push(units / (await extractionLoop(w.files)).seconds)
      }
      if (round % 2) {
        await loopSide()
        await pipelineSide()
      } else {
        await pipelineSide()
        await loopSide()
      }
    }
    const value = median(quire)
    const baseline = median(loop)
    record({
      scenario: 'pipeline',
      metric: w.metric,
      value,
      baseline,
      ratio: value / baseline,
      unit: w.unit,
      target: w.target,
    })
  }
} finally {
  await apps.stop()
}
