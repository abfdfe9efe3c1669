import type { LineItem } from '../src/index.ts'
import type { CorpusEntry } from './build-corpus.ts'
import type { ItemTruth } from './corpus-spec.ts'

/** The four cells of a row, in the order they are scored. */
const CELLS = ['description', 'quantity', 'unit_price', 'amount'] as const
/** A predicted row is the same item as a truth row when their descriptions share this much (token Dice). */
const SAME_ITEM = 0.5

export type LineItemScore = Pick<CorpusEntry, 'id' | 'split' | 'kind' | 'medium' | 'layout' | 'locale'> & {
  /** Cells in the truth (4 per row), cells read (non-null), cells read right. */
  truth: number
  predicted: number
  correct: number
  misses: string[]
}

export type Prf = { documents: number; precision: number; recall: number; f1: number }

/** Case and spacing do not count; punctuation at the ends neither. */
export const sameDescription = (a: unknown, b: string): boolean => typeof a === 'string' && squash(a) === squash(b)
const squash = (s: string): string =>
  s
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/^[\s.,;:\-–]+|[\s.,;:\-–]+$/g, '')
const sameNumber = (a: unknown, b: number): boolean => typeof a === 'number' && Math.abs(a - b) < 0.005

function similarity(a: unknown, b: string): number {
  if (typeof a !== 'string') return 0
  const ta = new Set(squash(a).split(' ').filter(Boolean))
  const tb = new Set(squash(b).split(' ').filter(Boolean))
  if (ta.size === 0 || tb.size === 0) return 0
  let common = 0
  for (const t of ta) if (tb.has(t)) common++
  return (2 * common) / (ta.size + tb.size)
}

/**
 * Cell-level score of one document's line items against the generator's truth. Rows are paired by description
 * similarity (each predicted row used once), a truth row left unpaired takes the predicted row at its own position
 * when that one is free; a cell is right when its row is paired and its value equals the truth (descriptions case-
 * and space-insensitively, numbers to the cent).
 */
export function scoreLineItems(entry: CorpusEntry, got: readonly LineItem[]): LineItemScore {
  const truth: readonly ItemTruth[] = entry.items ?? []
  const used = new Set<number>()
  const pairs: Array<[ItemTruth, LineItem | undefined]> = truth.map((t) => {
    let best = -1
    let bestSim = SAME_ITEM
    got.forEach((g, i) => {
      const sim = similarity(g.description.value, t.description)
      if (!used.has(i) && sim >= bestSim) {
        if (sim > bestSim || best < 0) best = i
        bestSim = sim
      }
    })
    if (best >= 0) used.add(best)
    return [t, best >= 0 ? got[best] : undefined]
  })
  pairs.forEach((pair, i) => {
    if (!pair[1] && got[i] && !used.has(i)) {
      used.add(i)
      pair[1] = got[i]
    }
  })
  let correct = 0
  const misses: string[] = []
  for (const [t, g] of pairs) {
    for (const cell of CELLS) {
      const want = t[cell]
      const have = g?.[cell].value ?? null
      const right = cell === 'description' ? sameDescription(have, want as string) : sameNumber(have, want as number)
      if (right) correct++
      else misses.push(`${cell}: got ${JSON.stringify(have)} want ${JSON.stringify(want)}`)
    }
  }
  const predicted = got.reduce((n, row) => n + CELLS.filter((c) => row[c].value !== null).length, 0)
  if (got.length > truth.length) misses.push(`${got.length - truth.length} extra row(s)`)
  const { id, split, kind, medium, layout, locale } = entry
  return { id, split, kind, medium, layout, locale, truth: truth.length * CELLS.length, predicted, correct, misses }
}

function prf(scores: readonly LineItemScore[]): Prf {
  const sum = (k: 'truth' | 'predicted' | 'correct'): number => scores.reduce((n, s) => n + s[k], 0)
  const precision = sum('predicted') ? sum('correct') / sum('predicted') : 0
  const recall = sum('truth') ? sum('correct') / sum('truth') : 0
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0
  const r3 = (n: number): number => Math.round(n * 1000) / 1000
  return { documents: scores.length, precision: r3(precision), recall: r3(recall), f1: r3(f1) }
}

/**
 * Cell-level precision, recall and F1 over documents: overall, per split and kind (`tune/invoice`), and per split
 * and medium (`holdout/image`).
 */
export function summariseLineItems(scores: readonly LineItemScore[]): {
  overall: Prf
  by_kind: Record<string, Prf>
  by_medium: Record<string, Prf>
} {
  const group = (key: (s: LineItemScore) => string): Record<string, Prf> => {
    const groups = new Map<string, LineItemScore[]>()
    for (const s of scores) groups.set(key(s), [...(groups.get(key(s)) ?? []), s])
    return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, list]) => [k, prf(list)]))
  }
  return {
    overall: prf(scores),
    by_kind: group((s) => `${s.split}/${s.kind}`),
    by_medium: group((s) => `${s.split}/${s.medium}`),
  }
}
