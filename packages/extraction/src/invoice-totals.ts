import { bestCandidate, type Candidate } from './field-candidates.ts'
import { findAmounts } from './normalise-amount.ts'

/** Confidence of figures that add up (total = untaxed + tax): at least this, plus CHECKED_BONUS. */
const CHECKED_FLOOR = 0.9
const CHECKED_BONUS = 0.05
const CHECKED_CEILING = 0.99
/** A consistent total replaces the best-labelled one unless it is this much less sure. */
const CONSISTENT_MARGIN = 0.2
/** A total below the untaxed amount, or a tax not below the total, is doubtful. */
const TOTAL_BELOW_UNTAXED = 0.7
const TAX_NOT_BELOW_TOTAL = 0.6
/** Figures derived from the other two (never read): share of the weaker source's confidence. */
const DERIVED_TOTAL = 0.6
const DERIVED_PART = 0.5
/** No labelled total: the largest amount, with or without a currency mark. */
const LARGEST_MARKED = 0.3
const LARGEST_BARE = 0.2

export const round2 = (n: number): number => Math.round(n * 100) / 100
export const sameAmount = (a: number, b: number): boolean => Math.abs(a - b) <= 0.011
const num = (c: Candidate | undefined): number | undefined => (typeof c?.value === 'number' ? c.value : undefined)

export type Totals = { amount?: Candidate; untaxed?: Candidate; tax?: Candidate }

/**
 * The total due, the untaxed amount and the tax, chosen by role and checked against each other:
 * a total that equals untaxed + tax (or that plus a cash rounding line) wins over a better-labelled
 * one that does not; figures that add up gain confidence, ones that contradict lose it; a missing
 * one is derived from the other two.
 */
export function reconcileTotals(
  lists: { totals: Candidate[]; untaxed: Candidate[]; tax: Candidate[]; rounding: Candidate[] },
  text: string,
): Totals {
  const { totals } = lists
  let amount = bestCandidate(totals, true)
  let untaxed = bestCandidate(lists.untaxed)
  let tax = bestCandidate(lists.tax)
  const u = num(untaxed)
  const t = num(tax)
  if (u !== undefined && t !== undefined) {
    const sum = round2(u + t)
    const adjust = num(bestCandidate(lists.rounding)) ?? 0
    // After cash rounding the rounded total is what was paid.
    const targets = adjust ? [round2(sum + adjust), sum] : [sum]
    for (const target of targets) {
      const pick = bestCandidate(
        totals.filter((c) => sameAmount(c.value as number, target)),
        true,
      )
      if (pick && (!amount || pick.confidence >= amount.confidence - CONSISTENT_MARGIN)) {
        amount = pick
        break
      }
    }
  }
  const chosen = num(amount)
  if (chosen !== undefined && u !== undefined && t !== undefined && !sameAmount(chosen, round2(u + t))) {
    // Another tax line may be the one that adds up (e.g. "VAT 20%" next to "VAT No").
    const other = lists.tax.find((c) => sameAmount(chosen, round2(u + (c.value as number))))
    if (other) tax = other
  }
  const a = num(amount)
  const ut = num(untaxed)
  const tx = num(tax)
  if (a !== undefined && ut !== undefined && tx !== undefined && sameAmount(a, round2(ut + tx))) {
    const boost = (c: Candidate): Candidate => ({
      ...c,
      confidence: Math.min(CHECKED_CEILING, Math.max(c.confidence, CHECKED_FLOOR) + CHECKED_BONUS),
    })
    return { amount: boost(amount!), untaxed: boost(untaxed!), tax: boost(tax!) }
  }
  if (a !== undefined && ut !== undefined && a < ut)
    amount = { ...amount!, confidence: amount!.confidence * TOTAL_BELOW_UNTAXED }
  if (a !== undefined && tx !== undefined && tx >= a)
    tax = { ...tax!, confidence: tax!.confidence * TAX_NOT_BELOW_TOTAL }
  if (a === undefined && ut !== undefined && tx !== undefined) {
    amount = derived(round2(ut + tx), DERIVED_TOTAL, untaxed!, tax!)
  } else if (a !== undefined && ut === undefined && tx !== undefined && tx < a) {
    untaxed = derived(round2(a - tx), DERIVED_PART, amount!, tax!)
  } else if (a !== undefined && ut !== undefined && tx === undefined && a >= ut) {
    tax = derived(round2(a - ut), DERIVED_PART, amount!, untaxed!)
  }
  return { amount: amount ?? largestAmount(text), untaxed, tax }
}

function derived(value: number, share: number, x: Candidate, y: Candidate): Candidate {
  return {
    value,
    confidence: share * Math.min(x.confidence, y.confidence),
    index: x.index,
    currency: x.currency ?? y.currency,
    hit: null,
  }
}

function largestAmount(text: string): Candidate | undefined {
  const money = findAmounts(text).filter((m) => m.quality === 1)
  const marked = money.filter((m) => m.currency)
  const pool = marked.length ? marked : money
  let largest: (typeof pool)[number] | undefined
  for (const m of pool) if (!largest || m.value > largest.value) largest = m
  if (!largest) return undefined
  return {
    value: largest.value,
    confidence: marked.length ? LARGEST_MARKED : LARGEST_BARE,
    index: largest.index,
    length: largest.length,
    currency: largest.currency,
    hit: null,
  }
}
