/**
 * `npm run eval:extraction`: generates the evaluation corpus (deterministic, into eval/.corpus,
 * git-ignored), parses and extracts every document with the real pipeline (pdf.js, tesseract,
 * mammoth), then does the same for the real documents of `shared/corpus/` where they lie (the
 * `real` part; never copied here). Prints per-field accuracy and every miss for each part, the
 * calibration table (confidence band → share right), pages per second for text PDFs and for OCR,
 * and writes it all to eval/results/latest.json.
 * Options: --engine <OCR engine> (default: the product's default; its parsed pages cached apart),
 * --split tune|holdout|real (default all three), --reuse (reuse parsed pages from the last
 * run; no speed figures then), --real <dir> (the real corpus; default ../shared/corpus beside the
 * repository), --min <fraction> (exit 1 when the held-out invoices' all-key-fields accuracy,
 * invoice_number, date, amount and currency together, is below it), --min-real <fraction> (exit 1
 * when the real receipts' date or amount accuracy is below it, or the real part is missing).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  createOcrEngine,
  DEFAULT_OCR_ENGINE,
  extractInvoice,
  type FileType,
  fuseReadings,
  type InvoiceFields,
  OCR_ENGINES,
  type OcrEngineName,
  parseDocument,
  type ParsedDocument,
} from '../src/index.ts'
import { buildCorpus, type Split } from './build-corpus.ts'
import { loadRealCorpus } from './real-corpus.ts'
import { type Scored, type ScoredEntry, scoreEntry, summarise } from './score-eval.ts'
import { type LineItemScore, scoreLineItems, summariseLineItems } from './score-line-items.ts'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const reuse = args.includes('--reuse')
const only = optionArg('--split') as Split | 'real' | undefined
const splits: Split[] = only ? (only === 'real' ? [] : [only]) : ['tune', 'holdout']
const withReal = !only || only === 'real'
const realRoot = resolve(optionArg('--real') ?? join(here, '..', '..', '..', '..', 'shared', 'corpus'))
const min = fractionArg('--min')
const minReal = fractionArg('--min-real')
if (min !== undefined && only && only !== 'holdout') {
  console.error('--min gates the held-out part; it cannot be combined with --split tune or real')
  process.exit(2)
}
if (minReal !== undefined && !withReal) {
  console.error('--min-real gates the real part; it cannot be combined with --split tune or holdout')
  process.exit(2)
}

/** `--name value` or `--name=value`. */
function optionArg(name: string): string | undefined {
  const at = args.findIndex((a) => a === name || a.startsWith(`${name}=`))
  if (at < 0) return undefined
  return (args[at] as string).startsWith(`${name}=`) ? (args[at] as string).slice(name.length + 1) : args[at + 1]
}

/** `--min 0.9` / `--min=0.9`: a fraction in 0..1, checked before the corpus is built. */
function fractionArg(name: string): number | undefined {
  if (!args.some((a) => a === name || a.startsWith(`${name}=`))) return undefined
  const raw = optionArg(name)
  const value = Number(raw)
  if (!raw?.trim() || !Number.isFinite(value) || value < 0 || value > 1) {
    console.error(`${name} needs a fraction between 0 and 1 (e.g. ${name} 0.9), got ${JSON.stringify(raw ?? '')}`)
    process.exit(2)
  }
  return value
}

const engineArg = optionArg('--engine') ?? DEFAULT_OCR_ENGINE
if (!(OCR_ENGINES as readonly string[]).includes(engineArg)) {
  console.error(`--engine must be one of ${OCR_ENGINES.join(', ')}, got ${JSON.stringify(engineArg)}`)
  process.exit(2)
}
const engine = engineArg as OcrEngineName
const ocr = createOcrEngine({ workers: 1, engine })
/** Parsed pages are cached per engine. */
const parsedDir = (dir: string): string => join(dir, `parsed-${engine}`)

/** The invoice fields of a parsed document; with a second OCR reading, both readings' fields fused. */
function extracted(doc: ParsedDocument): InvoiceFields {
  const fields = extractInvoice(doc)
  return doc.second ? fuseReadings(fields, extractInvoice(doc.second)) : fields
}
const timing = { text: { pages: 0, ms: 0 }, ocr: { pages: 0, ms: 0 } }
const scored: Scored[] = []
const lineItems: LineItemScore[] = []

type ToParse = { id: string; file: string; fileType: FileType; medium: string }

async function parsed(entry: ToParse, dir: string, cacheDir = parsedDir(dir)): Promise<ParsedDocument> {
  const cache = join(cacheDir, `${entry.id}.json`)
  if (reuse) {
    const cached = await readFile(cache, 'utf8').catch(() => null)
    if (cached) return JSON.parse(cached) as ParsedDocument
  }
  const started = performance.now()
  const result = await parseDocument(join(dir, entry.file), entry.fileType, { ocr })
  extractInvoice(result)
  const ms = performance.now() - started
  const bucket = result.ocrPages.length > 0 ? timing.ocr : entry.medium === 'pdf' ? timing.text : null
  if (bucket) {
    bucket.pages += result.pages.length
    bucket.ms += ms
  }
  await mkdir(dirname(cache), { recursive: true })
  await writeFile(cache, JSON.stringify(result))
  return result
}

try {
  for (const split of splits) {
    const dir = join(here, '.corpus', split)
    const entries = await buildCorpus(dir, split)
    for (const entry of entries) {
      const doc = await parsed(entry, dir)
      const fields = extracted(doc)
      scored.push(scoreEntry(entry, fields))
      lineItems.push(scoreLineItems(entry, fields.line_items))
      process.stdout.write('.')
    }
    process.stdout.write('\n')
  }
  if (withReal) {
    const sets = await loadRealCorpus(realRoot)
    if (!sets.length) console.error(`no real corpus under ${realRoot} (--real <dir>)`)
    for (const { dir, entries } of sets) {
      for (const entry of entries) {
        const doc = await parsed({ ...entry, medium: 'image' }, dir, parsedDir(join(here, '.corpus', 'real')))
        const scoredAs: ScoredEntry = {
          ...entry,
          split: 'real',
          kind: 'receipt',
          medium: 'image',
          layout: 'scan',
          locale: entry.set,
        }
        scored.push(scoreEntry(scoredAs, extracted(doc)))
        process.stdout.write('.')
      }
      process.stdout.write('\n')
    }
  }
} finally {
  await ocr.close()
}

const perSecond = (t: { pages: number; ms: number }): number | null =>
  t.pages > 0 ? Math.round((t.pages / (t.ms / 1000)) * 100) / 100 : null
const speed = { text_pdf_pages_per_second: perSecond(timing.text), ocr_pages_per_second: perSecond(timing.ocr) }
const report = {
  generated_at: new Date().toISOString(),
  engine,
  ...summarise(scored),
  line_items: summariseLineItems(lineItems),
  speed,
}

for (const [split, parts] of Object.entries(report.splits)) {
  for (const [kind, s] of Object.entries(parts)) {
    const fields = Object.entries(s.fields)
      .map(([f, v]) => `${f} ${(v * 100).toFixed(1)}%`)
      .join(', ')
    console.log(`${split} ${kind} (${s.documents}): ${fields}; all key fields ${(s.all_key_fields * 100).toFixed(1)}%`)
  }
}
for (const [language, s] of Object.entries(report.languages)) {
  const fields = Object.entries(s.fields)
    .map(([f, v]) => `${f} ${(v * 100).toFixed(1)}%`)
    .join(', ')
  console.log(
    `generated invoices, ${language} (${s.documents}): ${fields}; all key fields ${(s.all_key_fields * 100).toFixed(1)}%`,
  )
}
for (const [kind, prf] of Object.entries(report.line_items.by_kind))
  console.log(
    `line items, generated ${kind}s (${prf.documents}): cell F1 ${(prf.f1 * 100).toFixed(1)}% (precision ${(prf.precision * 100).toFixed(1)}%, recall ${(prf.recall * 100).toFixed(1)}%)`,
  )
for (const [split, rows] of Object.entries(report.calibration)) {
  console.log(`calibration, ${split}: confidence band → fields, share right`)
  for (const row of rows)
    console.log(`  ${row.band.padEnd(9)} ${String(row.fields).padStart(5)}  ${(row.right * 100).toFixed(1)}%`)
}
console.log(
  `provenance: ${(report.provenance * 100).toFixed(1)}% of found fields on positioned pages carry page and bbox`,
)
console.log(
  `speed: text PDF ${speed.text_pdf_pages_per_second ?? '-'} pages/s, OCR ${speed.ocr_pages_per_second ?? '-'} pages/s`,
)
for (const miss of report.misses)
  console.log(
    `miss ${miss.id} [${miss.medium}/${miss.layout}/${miss.locale}] ${miss.field}: got ${JSON.stringify(miss.got)} (${miss.confidence.toFixed(2)}) want ${JSON.stringify(miss.want)}`,
  )
const out = join(here, 'results', only ? `latest-${only}.json` : 'latest.json')
await mkdir(dirname(out), { recursive: true })
await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
console.log(`written ${out}`)

if (min !== undefined) {
  const heldOut = report.splits.holdout?.invoice?.all_key_fields
  if (heldOut === undefined) {
    console.error('--min: no held-out invoices were scored')
    process.exitCode = 1
  } else if (heldOut < min) {
    console.error(
      `FAIL: held-out invoices, all key fields ${(heldOut * 100).toFixed(1)}% < --min ${(min * 100).toFixed(1)}%`,
    )
    process.exitCode = 1
  } else
    console.log(
      `ok: held-out invoices, all key fields ${(heldOut * 100).toFixed(1)}% ≥ --min ${(min * 100).toFixed(1)}%`,
    )
}

if (minReal !== undefined) {
  const real = report.splits.real?.receipt
  const shares = real ? [real.fields.date, real.fields.amount] : []
  if (!real || shares.some((v) => v === undefined)) {
    console.error(`--min-real: no real receipts were scored (looked under ${realRoot})`)
    process.exitCode = 1
  } else {
    const worst = Math.min(...(shares as number[]))
    const line = `real receipts, date ${((real.fields.date as number) * 100).toFixed(1)}% and amount ${((real.fields.amount as number) * 100).toFixed(1)}%`
    if (worst < minReal) {
      console.error(`FAIL: ${line}; each must be ≥ --min-real ${(minReal * 100).toFixed(1)}%`)
      process.exitCode = 1
    } else console.log(`ok: ${line} ≥ --min-real ${(minReal * 100).toFixed(1)}%`)
  }
}
