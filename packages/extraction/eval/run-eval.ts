/**
 * `npm run eval:extraction`: generates the evaluation corpus (deterministic, into eval/.corpus,
 * git-ignored), parses and extracts every document with the real pipeline (pdf.js, tesseract,
 * mammoth), prints per-field accuracy and every miss for the tuned and the held-out part, pages
 * per second for text PDFs and for OCR, and writes it all to eval/results/latest.json.
 * Options: --split tune|holdout (default both), --reuse (reuse parsed pages from the last run;
 * no speed figures then), --min <fraction> (exit 1 when the held-out invoices' all-key-fields
 * accuracy, invoice_number, date, amount and currency together, is below it; a gate for CI).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createOcrEngine, extractInvoice, parseDocument, type ParsedDocument } from '../src/index.ts'
import { buildCorpus, type CorpusEntry, type Split } from './build-corpus.ts'
import { scoreEntry, summarise, type Scored } from './score-eval.ts'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const reuse = args.includes('--reuse')
const only = args.includes('--split') ? (args[args.indexOf('--split') + 1] as Split) : undefined
const splits: Split[] = only ? [only] : ['tune', 'holdout']
const min = minimumArg()

/** `--min 0.9` / `--min=0.9`: a fraction in 0..1, checked before the corpus is built. */
function minimumArg(): number | undefined {
  const at = args.findIndex((a) => a === '--min' || a.startsWith('--min='))
  if (at < 0) return undefined
  const raw = (args[at] as string).startsWith('--min=') ? (args[at] as string).slice(6) : args[at + 1]
  const value = Number(raw)
  if (!raw?.trim() || !Number.isFinite(value) || value < 0 || value > 1) {
    console.error(`--min needs a fraction between 0 and 1 (e.g. --min 0.9), got ${JSON.stringify(raw ?? '')}`)
    process.exit(2)
  }
  if (only === 'tune') {
    console.error('--min gates the held-out part; it cannot be combined with --split tune')
    process.exit(2)
  }
  return value
}

const ocr = createOcrEngine({ workers: 1 })
const timing = { text: { pages: 0, ms: 0 }, ocr: { pages: 0, ms: 0 } }
const scored: Scored[] = []

async function parsed(entry: CorpusEntry, dir: string): Promise<ParsedDocument> {
  const cache = join(dir, 'parsed', `${entry.id}.json`)
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
      scored.push(scoreEntry(entry, extractInvoice(doc)))
      process.stdout.write('.')
    }
    process.stdout.write('\n')
  }
} finally {
  await ocr.close()
}

const perSecond = (t: { pages: number; ms: number }): number | null =>
  t.pages > 0 ? Math.round((t.pages / (t.ms / 1000)) * 100) / 100 : null
const speed = { text_pdf_pages_per_second: perSecond(timing.text), ocr_pages_per_second: perSecond(timing.ocr) }
const report = { generated_at: new Date().toISOString(), ...summarise(scored), speed }

for (const [split, parts] of Object.entries(report.splits)) {
  for (const [kind, s] of Object.entries(parts)) {
    const fields = Object.entries(s.fields)
      .map(([f, v]) => `${f} ${(v * 100).toFixed(1)}%`)
      .join(', ')
    console.log(`${split} ${kind} (${s.documents}): ${fields}; all key fields ${(s.all_key_fields * 100).toFixed(1)}%`)
  }
}
console.log(
  `provenance: ${(report.provenance * 100).toFixed(1)}% of found fields on positioned pages carry page and bbox`,
)
console.log(
  `speed: text PDF ${speed.text_pdf_pages_per_second ?? '-'} pages/s, OCR ${speed.ocr_pages_per_second ?? '-'} pages/s`,
)
for (const miss of report.misses)
  console.log(
    `miss ${miss.id} [${miss.medium}/${miss.layout}/${miss.locale}] ${miss.field}: got ${JSON.stringify(miss.got)} want ${JSON.stringify(miss.want)}`,
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
