import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { LocaleId } from './corpus-locales.ts'
import { HOLDOUT_LAYOUTS, invoicePage, receiptPage, TUNED_LAYOUTS, type PageModel } from './corpus-layouts.ts'
import { RECEIPT_COUNTRIES, receiptSpec } from './corpus-receipts.ts'
import { renderDocx, renderImage, renderPdf, renderScannedPdf, scanOptions } from './corpus-render.ts'
import {
  formatDate,
  hashSeed,
  int,
  invoiceSpec,
  itemTruth,
  pick,
  rng,
  type DocSpec,
  type Expected,
  type ItemTruth,
} from './corpus-spec.ts'

export type Split = 'tune' | 'holdout'
export type Medium = 'pdf' | 'image' | 'scanned-pdf' | 'docx'

export type CorpusEntry = {
  id: string
  split: Split
  kind: 'invoice' | 'receipt'
  medium: Medium
  layout: string
  locale: string
  file: string
  fileType: 'pdf' | 'png' | 'jpeg' | 'docx'
  expected: Expected
  /** The item table's rows as printed (truth for the line-item score). */
  items: ItemTruth[]
}

const LOCALE_IDS: readonly LocaleId[] = ['en-US', 'en-GB', 'en-IN', 'de-DE', 'fr-FR', 'nl-NL', 'es-ES', 'it-IT']
const MEDIA: readonly Medium[] = ['pdf', 'image', 'pdf', 'docx', 'image', 'scanned-pdf', 'pdf', 'image']
const FONTS: readonly PageModel['font'][] = ['sans', 'serif', 'sans', 'mono']

/** Second description lines of wrapped items (no numbers, dates or labels, which the key fields must not take). */
const DETAILS = [
  '(on site, building B)',
  'incl. installation and set-up',
  'for the spring campaign',
  'as agreed by phone',
  'extended warranty',
  'remote, weekday hours',
]

/**
 * How one invoice's item table is drawn, from its own seed (the main stream, which draws the key fields, does not
 * move): a position column, ruled borders, some descriptions wrapped onto a second line.
 */
export function decorateItems(spec: DocSpec): DocSpec {
  const v = rng(hashSeed(spec.id))
  const wraps = v() < 0.4
  const lines = spec.lines.map((l) => (wraps && v() < 0.5 ? { ...l, detail: pick(v, DETAILS) } : l))
  return { ...spec, lines, table: { position: v() < 0.3, bordered: v() < 0.35 } }
}

/**
 * What real invoices showed that clean generated ones did not (issue 37): ids with slashes and letters, a delivery,
 * order or print date beside the invoice date, a tax summary whose gross is another "total", faded print. Drawn from
 * the document's own seed, so the main stream (and every other document) stays as it was.
 */
export function hardenInvoice(spec: DocSpec): DocSpec {
  const v = rng(hashSeed(`${spec.id}:hard`))
  const date = new Date(`${spec.expected.date}T00:00:00Z`)
  const [y, m, d] = spec.expected.date.split('-') as [string, string, string]
  const n = int(v, 1, 99_999)
  const letter = pick(v, ['A', 'B', 'E', 'K', 'R'])
  const hardIds = [
    `RE-${y}${m}${d}/${n % 1000}`,
    `${letter}${y}${m}${d}${String(n).padStart(5, '0')}`,
    `FV/${y}/${String(n % 10_000).padStart(4, '0')}`,
    `${y.slice(2)}-${n % 1000}/${letter}`,
    `INV/${y.slice(2)}-${String(n % 10_000).padStart(4, '0')}`,
  ]
  let out = spec
  // An invoice number (not a booking or order reference standing in for one) takes a hard shape.
  if (spec.number && spec.locale.number.includes(spec.number.label) && v() < 0.4) {
    const value = pick(v, hardIds)
    out = { ...out, number: { ...spec.number, value }, expected: { ...out.expected, invoice_number: value } }
  }
  if (v() < 0.5) {
    const kind = int(v, 0, 2)
    const days = [-int(v, 1, 10), -int(v, 3, 20), int(v, 1, 5)][kind] as number
    const other = new Date(date.getTime() + days * 86_400_000)
    const label = spec.locale.otherDates[kind] as string
    out = {
      ...out,
      otherDate: { label, text: formatDate(other, spec.datePattern, spec.locale.months), before: v() < 0.5 },
    }
  }
  return { ...out, summary: v() < 0.35, faded: v() < 0.3 }
}

/** Sizes and seeds of the two parts. The held-out seed, issuer names and two layouts are never tuned on. */
export const SPLITS: Record<Split, { seed: number; invoices: number; receipts: number }> = {
  tune: { seed: 1001, invoices: 40, receipts: 9 },
  holdout: { seed: 7919, invoices: 40, receipts: 18 },
}

async function writeMedium(
  dir: string,
  id: string,
  medium: Medium,
  page: PageModel,
  r: () => number,
  receipt: boolean,
  faded = false,
): Promise<Pick<CorpusEntry, 'file' | 'fileType'>> {
  if (medium === 'pdf') {
    await writeFile(join(dir, `${id}.pdf`), await renderPdf(page))
    return { file: `${id}.pdf`, fileType: 'pdf' }
  }
  if (medium === 'docx') {
    await writeFile(join(dir, `${id}.docx`), await renderDocx(page))
    return { file: `${id}.docx`, fileType: 'docx' }
  }
  const options = scanOptions(r, receipt)
  if (faded) options.faded = true
  const image = await renderImage(page, r, options)
  if (medium === 'scanned-pdf') {
    await writeFile(join(dir, `${id}.pdf`), await renderScannedPdf(image, page))
    return { file: `${id}.pdf`, fileType: 'pdf' }
  }
  const ext = options.jpeg ? 'jpeg' : 'png'
  await writeFile(join(dir, `${id}.${ext === 'jpeg' ? 'jpg' : 'png'}`), image)
  return { file: `${id}.${ext === 'jpeg' ? 'jpg' : 'png'}`, fileType: ext }
}

/** Generates one part of the corpus into `dir` (deterministic for its seed) and returns its manifest. */
export async function buildCorpus(dir: string, split: Split): Promise<CorpusEntry[]> {
  await mkdir(dir, { recursive: true })
  const { seed, invoices, receipts } = SPLITS[split]
  const r = rng(seed)
  const layouts = split === 'tune' ? TUNED_LAYOUTS : HOLDOUT_LAYOUTS
  const entries: CorpusEntry[] = []
  for (let i = 0; i < invoices; i++) {
    const localeId = LOCALE_IDS[i % LOCALE_IDS.length] as LocaleId
    const layout = layouts[(i + Math.floor(i / LOCALE_IDS.length)) % layouts.length] as (typeof layouts)[number]
    const medium = MEDIA[(i * 3 + (split === 'tune' ? 0 : 1)) % MEDIA.length] as Medium
    const id = `${split}-inv-${String(i + 1).padStart(2, '0')}`
    const spec = hardenInvoice(
      decorateItems(
        invoiceSpec(r, id, localeId, {
          holdout: split === 'holdout',
          pdfSafe: medium === 'pdf',
          reference: layout === 'booking',
        }),
      ),
    )
    const font = medium === 'pdf' || medium === 'docx' ? pick(r, FONTS) : pick(r, ['sans', 'serif'] as const)
    const written = await writeMedium(dir, id, medium, invoicePage(spec, layout, font), r, false, spec.faded)
    const items = itemTruth(spec.lines)
    entries.push({
      id,
      split,
      kind: 'invoice',
      medium,
      layout,
      locale: localeId,
      ...written,
      expected: spec.expected,
      items,
    })
  }
  for (let i = 0; i < receipts; i++) {
    const id = `${split}-rct-${String(i + 1).padStart(2, '0')}`
    const spec = receiptSpec(r, id, i % RECEIPT_COUNTRIES)
    const medium: Medium = i % 4 === 3 ? 'scanned-pdf' : 'image'
    const written = await writeMedium(dir, id, medium, receiptPage(spec), r, true)
    entries.push({
      id,
      split,
      kind: 'receipt',
      medium,
      layout: 'till-slip',
      locale: spec.country,
      ...written,
      expected: spec.expected,
      items: spec.items,
    })
  }
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(entries, null, 2))
  return entries
}
