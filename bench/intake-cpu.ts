// CPU per call of intake's page count and type sniff, before and after they read the file's structure and the
// upload's head (issue 39): `node --conditions=@quire/source --import tsx bench/intake-cpu.ts`. Sequential calls,
// process.cpuUsage (user + system) over CALLS calls after a warm-up; a side script, not part of `npm run bench`.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { countPages, SNIFF_HEAD_BYTES, sniffFileType, sniffFileTypeFromHead } from '@quire/extraction'
import { openPdfByRanges } from '../packages/extraction/src/pdf-document.ts'
import { invoicePdf, textPdf } from '../tests/fixtures/make-fixtures.ts'

const CALLS = 1000
const WARM_UP = 100

/** What countPages did for a PDF before: pdf.js opens the document by ranges. */
async function pdfjsCount(path: string): Promise<number> {
  const doc = await openPdfByRanges(path)
  try {
    return doc.numPages
  } finally {
    await doc.destroy()
    await doc.closeFile()
  }
}

async function cpuPerCall(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARM_UP; i++) await fn()
  const start = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) await fn()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000 / CALLS
}

const dir = await mkdtemp(join(tmpdir(), 'quire-intake-cpu-'))
try {
  const demo = join(dir, 'demo.pdf')
  await writeFile(demo, await invoicePdf())
  const hundred = join(dir, 'hundred.pdf')
  await writeFile(hundred, await textPdf(Array.from({ length: 100 }, (_, i) => [`Page ${i + 1}`, 'Invoice line'])))
  const rows: [string, number][] = []
  for (const [name, path] of [
    ['demo PDF', demo],
    ['100-page PDF', hundred],
  ] as const) {
    const bytes = await readFile(path)
    if ((await countPages(path, 'pdf')) !== (await pdfjsCount(path))) throw new Error(`counts differ for ${name}`)
    rows.push([
      `${name} (${bytes.length} bytes): page count, pdf.js (before)`,
      await cpuPerCall(() => pdfjsCount(path)),
    ])
    rows.push([`${name}: page count, structure (after)`, await cpuPerCall(() => countPages(path, 'pdf'))])
    const head = bytes.subarray(0, SNIFF_HEAD_BYTES)
    rows.push([`${name}: sniff from the file (before)`, await cpuPerCall(() => sniffFileType(path))])
    rows.push([
      `${name}: sniff from the head (after)`,
      await cpuPerCall(() => sniffFileTypeFromHead(head, bytes.length)),
    ])
  }
  for (const [what, ms] of rows) console.log(`${what.padEnd(64)} ${ms.toFixed(3)} ms CPU per call`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
