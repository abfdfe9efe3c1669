import { scalarFields, type InvoiceFields } from '../src/index.ts'
import type { CorpusEntry } from './build-corpus.ts'

/** Fields scored per kind: a receipt has no invoice number to read. */
const KEY_FIELDS = {
  invoice: ['invoice_number', 'date', 'amount', 'currency'],
  receipt: ['date', 'amount', 'currency'],
} as const

export type Miss = Pick<CorpusEntry, 'id' | 'medium' | 'layout' | 'locale'> & {
  field: string
  got: unknown
  want: unknown
}
export type Scored = {
  entry: CorpusEntry
  right: Record<string, boolean>
  misses: Miss[]
  located: number
  found: number
}

const same = (field: string, got: unknown, want: unknown): boolean =>
  field === 'amount' ? typeof got === 'number' && Math.abs(got - Number(want)) < 0.005 : got === want

export function scoreEntry(entry: CorpusEntry, fields: InvoiceFields): Scored {
  const right: Record<string, boolean> = {}
  const misses: Miss[] = []
  for (const field of KEY_FIELDS[entry.kind]) {
    const want = entry.expected[field]
    const got = fields[field].value
    right[field] = same(field, got, want)
    if (!right[field]) {
      const { id, medium, layout, locale } = entry
      misses.push({ id, medium, layout, locale, field, got, want })
    }
  }
  // DOCX has no positions; everything else must say where each found value was read.
  const positioned = entry.medium !== 'docx'
  const found = Object.values(scalarFields(fields)).filter((f) => f.value !== null && positioned)
  const located = found.filter((f) => f.page !== undefined && f.bbox !== undefined).length
  return { entry, right, misses, located, found: found.length }
}

type PartSummary = { documents: number; fields: Record<string, number>; all_key_fields: number }

export function summarise(scored: readonly Scored[]) {
  const splits: Record<string, Record<string, PartSummary>> = {}
  const groups = new Map<string, Scored[]>()
  for (const s of scored) {
    const key = `${s.entry.split}/${s.entry.kind}`
    groups.set(key, [...(groups.get(key) ?? []), s])
  }
  for (const [key, list] of groups) {
    const [split, kind] = key.split('/') as [string, keyof typeof KEY_FIELDS]
    const share = (n: number): number => Math.round((n / list.length) * 1000) / 1000
    const fields: Record<string, number> = {}
    for (const field of KEY_FIELDS[kind]) fields[field] = share(list.filter((s) => s.right[field]).length)
    splits[split] ??= {}
    splits[split][kind] = {
      documents: list.length,
      fields,
      all_key_fields: share(list.filter((s) => Object.values(s.right).every(Boolean)).length),
    }
  }
  const found = scored.reduce((n, s) => n + s.found, 0)
  const located = scored.reduce((n, s) => n + s.located, 0)
  return {
    splits,
    provenance: found ? Math.round((located / found) * 1000) / 1000 : 0,
    misses: scored.flatMap((s) => s.misses),
  }
}
