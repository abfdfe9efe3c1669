import { scalarFields, type InvoiceFields } from '../src/index.ts'
import type { CorpusEntry } from './build-corpus.ts'

/** What scoring needs of a document: the generated corpus's entries and the real sets' both have it. */
export type ScoredEntry = Pick<CorpusEntry, 'id' | 'medium' | 'layout' | 'locale' | 'kind'> & {
  split: string
  /** The truth; a key field the truth leaves out (a real receipt's currency) is not scored. */
  expected: Partial<Record<string, unknown>>
}

/** Fields scored per kind: a receipt has no invoice number to read. */
const KEY_FIELDS = {
  invoice: ['invoice_number', 'date', 'amount', 'currency'],
  receipt: ['date', 'amount', 'currency'],
} as const

export type Miss = Pick<CorpusEntry, 'id' | 'medium' | 'layout' | 'locale'> & {
  field: string
  got: unknown
  want: unknown
  confidence: number
}
/** One scored key field: what calibration is measured on. */
export type Judged = { split: string; field: string; confidence: number; right: boolean }
export type Scored = {
  entry: ScoredEntry
  right: Record<string, boolean>
  misses: Miss[]
  judged: Judged[]
  located: number
  found: number
}

const same = (field: string, got: unknown, want: unknown): boolean =>
  field === 'amount' ? typeof got === 'number' && Math.abs(got - Number(want)) < 0.005 : got === want

export function scoreEntry(entry: ScoredEntry, fields: InvoiceFields): Scored {
  const right: Record<string, boolean> = {}
  const misses: Miss[] = []
  const judged: Judged[] = []
  for (const field of KEY_FIELDS[entry.kind]) {
    const want = entry.expected[field]
    if (want === undefined) continue
    const { value: got, confidence } = fields[field]
    right[field] = same(field, got, want)
    judged.push({ split: entry.split, field, confidence, right: right[field] })
    if (!right[field]) {
      const { id, medium, layout, locale } = entry
      misses.push({ id, medium, layout, locale, field, got, want, confidence })
    }
  }
  // DOCX has no positions; everything else must say where each found value was read.
  const positioned = entry.medium !== 'docx'
  const found = Object.values(scalarFields(fields)).filter((f) => f.value !== null && positioned)
  const located = found.filter((f) => f.page !== undefined && f.bbox !== undefined).length
  return { entry, right, misses, judged, located, found: found.length }
}

type PartSummary = { documents: number; fields: Record<string, number>; all_key_fields: number }

/** Confidence bands of the calibration table, highest first; the first says whether `min_confidence: 0.9` is safe. */
const BANDS = [0.9, 0.8, 0.7, 0.5, 0] as const
export type CalibrationRow = { band: string; fields: number; right: number }

/** Per confidence band: how many scored fields fell in it and what share of them was right. */
export function calibrate(judged: readonly Judged[]): CalibrationRow[] {
  return BANDS.map((low, i) => {
    const high = i === 0 ? Number.POSITIVE_INFINITY : (BANDS[i - 1] as number)
    const inBand = judged.filter((j) => j.confidence >= low && j.confidence < high)
    const right = inBand.filter((j) => j.right).length
    return {
      band: i === 0 ? `≥ ${low}` : `${low}–${high}`,
      fields: inBand.length,
      right: inBand.length ? Math.round((right / inBand.length) * 1000) / 1000 : 0,
    }
  })
}

function partSummary(list: readonly Scored[], kind: keyof typeof KEY_FIELDS): PartSummary {
  const share = (n: number, of: number): number => Math.round((n / of) * 1000) / 1000
  const fields: Record<string, number> = {}
  for (const field of KEY_FIELDS[kind]) {
    const scoredOn = list.filter((s) => s.right[field] !== undefined)
    if (scoredOn.length) fields[field] = share(scoredOn.filter((s) => s.right[field]).length, scoredOn.length)
  }
  return {
    documents: list.length,
    fields,
    all_key_fields: share(list.filter((s) => Object.values(s.right).every(Boolean)).length, list.length),
  }
}

/** The language of a generated document's locale (`de-DE` → `de`). */
const languageOf = (locale: string): string => locale.split('-')[0] as string

export function summarise(scored: readonly Scored[]) {
  const splits: Record<string, Record<string, PartSummary>> = {}
  const groups = new Map<string, Scored[]>()
  for (const s of scored) {
    const key = `${s.entry.split}/${s.entry.kind}`
    groups.set(key, [...(groups.get(key) ?? []), s])
  }
  for (const [key, list] of groups) {
    const [split, kind] = key.split('/') as [string, keyof typeof KEY_FIELDS]
    splits[split] ??= {}
    splits[split][kind] = partSummary(list, kind)
  }
  // Generated invoices per language, both generated parts together: each language must hold on its own.
  const languages: Record<string, PartSummary> = {}
  const invoices = scored.filter((s) => s.entry.kind === 'invoice' && s.entry.split !== 'real')
  for (const language of [...new Set(invoices.map((s) => languageOf(s.entry.locale)))].sort())
    languages[language] = partSummary(
      invoices.filter((s) => languageOf(s.entry.locale) === language),
      'invoice',
    )
  const found = scored.reduce((n, s) => n + s.found, 0)
  const located = scored.reduce((n, s) => n + s.located, 0)
  const judged = scored.flatMap((s) => s.judged)
  const calibration: Record<string, CalibrationRow[]> = {}
  for (const split of Object.keys(splits)) calibration[split] = calibrate(judged.filter((j) => j.split === split))
  return {
    splits,
    languages,
    calibration,
    provenance: found ? Math.round((located / found) * 1000) / 1000 : 0,
    misses: scored.flatMap((s) => s.misses),
  }
}
