/**
 * OCR engines side by side on real scans: `node --conditions=@quire/source --import tsx
 * packages/extraction/eval/compare-ocr.ts [--limit N] [--engines tesseract,tesseract-prep,paddle,combined]
 * [--corpus DIR] [--fresh]`.
 *
 * For each engine and receipt of the corpus (default ../shared/corpus/sroie-dev beside the repository: NNN.jpg with
 * NNN.json ground truth), it measures (1) string recall: the printed date and total strings found verbatim in the OCR
 * text, (2) field accuracy end to end: extractInvoice on the page (its words and boxes, as parse gives them), date as
 * YYYY-MM-DD and amount as a number, (3) pages per second (OCR of the prepared page, one process, model load
 * excluded) and (4) the peak RSS of the process that ran the engine. Each engine runs in a child process of its own,
 * one after the other; its readings are cached in eval/.corpus/ocr/<engine>/ (git-ignored), so a rerun only scores,
 * unless --fresh. The images are read from the corpus directory and never copied.
 */
import { fork } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createOcrEngine, type OcrEngineName } from '../src/create-ocr-engine.ts'
import { extractInvoice, imagePageForOcr, normaliseAmount, normaliseDate, type OcrResult } from '../src/index.ts'

const here = dirname(fileURLToPath(import.meta.url))
const ENGINES: OcrEngineName[] = ['tesseract', 'tesseract-prep', 'paddle', 'combined']
const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const corpus = arg('--corpus') ?? join(here, '..', '..', '..', '..', 'shared', 'corpus', 'sroie-dev')
const limit = Number(arg('--limit') ?? Number.POSITIVE_INFINITY)
const engines = (arg('--engines')?.split(',') ?? ENGINES) as OcrEngineName[]
const fresh = args.includes('--fresh')
const childEngine = arg('--child') as OcrEngineName | undefined

type Truth = { date: string; total: string }
/** An engine's reading of one receipt, with its wall time and CPU time (all threads of the process). */
type Reading = OcrResult & { ms: number; cpuMs: number }
type RunStats = { engine: OcrEngineName; pages: number; ms: number; peakRssBytes: number }

const cacheDir = (engine: string) => join(here, '.corpus', 'ocr', engine)

async function receiptIds(): Promise<string[]> {
  const names = await readdir(corpus)
  return names
    .filter((n) => n.endsWith('.jpg'))
    .map((n) => n.slice(0, -4))
    .sort()
    .slice(0, limit)
}

/** In a child: reads every receipt not cached yet with one engine, and reports its time and peak memory. */
async function runEngine(engine: OcrEngineName): Promise<void> {
  const ocr = createOcrEngine({ engine })
  await ocr.start()
  await mkdir(cacheDir(engine), { recursive: true })
  const stats: RunStats = { engine, pages: 0, ms: 0, peakRssBytes: 0 }
  try {
    for (const id of await receiptIds()) {
      const file = join(cacheDir(engine), `${id}.json`)
      if (!fresh && (await readFile(file).catch(() => null))) continue
      const started = performance.now()
      const cpu = process.cpuUsage()
      const page = await imagePageForOcr(join(corpus, `${id}.jpg`), 'jpeg')
      const result = await ocr.recognize(page)
      const ms = performance.now() - started
      const used = process.cpuUsage(cpu)
      const cpuMs = (used.user + used.system) / 1000
      stats.pages++
      stats.ms += ms
      await writeFile(file, JSON.stringify({ ...result, ms, cpuMs } satisfies Reading))
      process.stdout.write('.')
    }
  } finally {
    await ocr.close()
  }
  // maxRSS is in kilobytes: the high-water mark of this process, model loads included.
  stats.peakRssBytes = process.resourceUsage().maxRSS * 1024
  if (stats.pages > 0) await writeFile(join(cacheDir(engine), 'run.json'), JSON.stringify(stats))
  process.stdout.write('\n')
}

function runChild(engine: OcrEngineName): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [...args, '--child', engine], { stdio: 'inherit' })
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${engine} exited with ${code}`))))
  })
}

type Score = {
  engine: string
  receipts: number
  /** Receipts whose truth has a date / a total (a few ground-truth files leave the total empty). */
  dates: number
  totals: number
  dateRight: number
  totalRight: number
  bothRight: number
  dateString: number
  totalString: number
  pagesPerSecond: number | null
  /** CPU seconds per page: steadier than pages/s on a shared machine. */
  cpuSecondsPerPage: number | null
  peakRssMb: number | null
  misses: string[]
}

/** Spacing and case aside: `10 MAR 2018` is found in `10 Mar 2018`. */
const collapse = (s: string) => s.replace(/\s+/g, ' ').toUpperCase()

async function score(engine: OcrEngineName): Promise<Score> {
  const s: Score = {
    engine,
    receipts: 0,
    dates: 0,
    totals: 0,
    dateRight: 0,
    totalRight: 0,
    bothRight: 0,
    dateString: 0,
    totalString: 0,
    pagesPerSecond: null,
    cpuSecondsPerPage: null,
    peakRssMb: null,
    misses: [],
  }
  let ms = 0
  let cpuMs = 0
  for (const id of await receiptIds()) {
    const truth = JSON.parse(await readFile(join(corpus, `${id}.json`), 'utf8')) as Truth
    const reading = JSON.parse(await readFile(join(cacheDir(engine), `${id}.json`), 'utf8')) as Reading
    ms += reading.ms
    cpuMs += reading.cpuMs ?? Number.NaN
    s.receipts++
    const text = collapse(reading.text)
    const wantDate = truth.date.trim() ? normaliseDate(truth.date, { order: 'DMY' }) : null
    const wantTotal = truth.total.trim() ? normaliseAmount(truth.total) : null
    // The printed strings: the total without a currency the ground truth sometimes prefixes ($6.90, RM 3.90).
    const printedTotal = truth.total.replace(/^\s*(RM|\$)\s*/i, '').trim()
    if (wantDate && text.includes(collapse(truth.date.trim()))) s.dateString++
    if (wantTotal !== null && text.includes(collapse(printedTotal))) s.totalString++
    const fields = extractInvoice({
      pages: [reading.text],
      layouts: [reading.words?.length ? { page: 1, words: reading.words } : null],
    })
    // A field the ground truth leaves empty is not scored (and counts as right for `both`).
    const dateOk = wantDate === null || fields.date.value === wantDate
    const totalOk =
      wantTotal === null ||
      (typeof fields.amount.value === 'number' && Math.abs(fields.amount.value - wantTotal) < 0.005)
    if (wantDate !== null) s.dates++
    if (wantTotal !== null) s.totals++
    if (wantDate !== null && dateOk) s.dateRight++
    if (wantTotal !== null && totalOk) s.totalRight++
    if (dateOk && totalOk) s.bothRight++
    if (!dateOk) s.misses.push(`${id} date ${fields.date.value} want ${wantDate}`)
    if (!totalOk) s.misses.push(`${id} total ${fields.amount.value} want ${wantTotal}`)
  }
  const run = JSON.parse(await readFile(join(cacheDir(engine), 'run.json'), 'utf8').catch(() => '{}')) as RunStats
  s.pagesPerSecond = ms > 0 ? (s.receipts * 1000) / ms : null
  s.cpuSecondsPerPage = Number.isFinite(cpuMs) && s.receipts > 0 ? cpuMs / 1000 / s.receipts : null
  s.peakRssMb = run.peakRssBytes ? Math.round(run.peakRssBytes / 1024 / 1024) : null
  return s
}

if (childEngine) {
  await runEngine(childEngine)
} else {
  for (const engine of engines) {
    if (!ENGINES.includes(engine)) throw new Error(`unknown engine ${engine} (one of ${ENGINES.join(', ')})`)
    console.log(`${engine}:`)
    await runChild(engine)
  }
  const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}%`
  const scores = await Promise.all(engines.map(score))
  if (args.includes('--misses'))
    for (const s of scores) console.log(`\n${s.engine} misses:\n  ${s.misses.join('\n  ')}`)
  console.log(
    '\n| engine | receipts | date | total | both | date string | total string | pages/s | CPU s/page | peak RSS |\n' +
      '|---|---|---|---|---|---|---|---|---|---|',
  )
  for (const s of scores) {
    const n = s.receipts
    console.log(
      `| ${s.engine} | ${n} | ${pct(s.dateRight, s.dates)} | ${pct(s.totalRight, s.totals)} | ${pct(s.bothRight, n)} | ` +
        `${pct(s.dateString, s.dates)} | ${pct(s.totalString, s.totals)} | ${s.pagesPerSecond?.toFixed(2) ?? '-'} | ${s.cpuSecondsPerPage?.toFixed(2) ?? '-'} | ` +
        `${s.peakRssMb ?? '-'} MB |`,
    )
  }
  await mkdir(join(here, 'results'), { recursive: true })
  await writeFile(join(here, 'results', 'latest-compare-ocr.json'), JSON.stringify(scores, null, 2))
}
