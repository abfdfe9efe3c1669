/**
 * Line-item score on the generated corpus, for iterating on extract-line-items.ts:
 * `node --conditions=@quire/source --import tsx packages/extraction/eval/run-line-items.ts [--split tune|holdout]
 * [--misses]`. Builds the corpus like `npm run eval:extraction`, parses each document (reusing
 * eval/.corpus/<split>/parsed/<id>.json when it was parsed from the same file bytes, or when run-eval.ts wrote it
 * without a fingerprint), extracts the invoice and prints cell-level precision, recall and F1 per split, kind and
 * medium.
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createOcrEngine, extractInvoice, parseDocument, type ParsedDocument } from '../src/index.ts'
import { buildCorpus, type CorpusEntry, type Split } from './build-corpus.ts'
import { scoreLineItems, summariseLineItems, type LineItemScore, type Prf } from './score-line-items.ts'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const only = args.includes('--split') ? (args[args.indexOf('--split') + 1] as Split) : undefined
const splits: Split[] = only ? [only] : ['tune', 'holdout']
const showMisses = args.includes('--misses')

const ocr = createOcrEngine({ workers: 1 })

async function parsed(entry: CorpusEntry, dir: string): Promise<ParsedDocument> {
  const cache = join(dir, 'parsed', `${entry.id}.json`)
  const marker = `${cache}.sha1`
  const sha = createHash('sha1')
    .update(await readFile(join(dir, entry.file)))
    .digest('hex')
  const [cached, seen] = await Promise.all([
    readFile(cache, 'utf8').catch(() => null),
    readFile(marker, 'utf8').catch(() => null),
  ])
  if (cached && (seen === null || seen.trim() === sha)) return JSON.parse(cached) as ParsedDocument
  const result = await parseDocument(join(dir, entry.file), entry.fileType, { ocr })
  await mkdir(dirname(cache), { recursive: true })
  await writeFile(cache, JSON.stringify(result))
  await writeFile(marker, sha)
  return result
}

const scores: LineItemScore[] = []
try {
  for (const split of splits) {
    const dir = join(here, '.corpus', split)
    for (const entry of await buildCorpus(dir, split)) {
      scores.push(scoreLineItems(entry, extractInvoice(await parsed(entry, dir)).line_items))
      process.stdout.write('.')
    }
    process.stdout.write('\n')
  }
} finally {
  await ocr.close()
}

const line = (name: string, p: Prf): string =>
  `${name.padEnd(22)} docs ${String(p.documents).padStart(3)}  P ${(p.precision * 100).toFixed(1)}%  R ${(p.recall * 100).toFixed(1)}%  F1 ${(p.f1 * 100).toFixed(1)}%`
const summary = summariseLineItems(scores)
for (const [name, p] of Object.entries(summary.by_kind)) console.log(line(name, p))
for (const [name, p] of Object.entries(summary.by_medium)) console.log(line(name, p))
console.log(line('overall', summary.overall))
if (showMisses)
  for (const s of scores)
    if (s.misses.length) console.log(`${s.id} [${s.medium}/${s.layout}/${s.locale}] ${s.misses.join('; ')}`)
