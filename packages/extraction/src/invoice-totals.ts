import { bestCandidate, type Candidate } from './field-candidates.ts'
import type { LabelHit } from './label-matching.ts'
import { findAmounts } from './normalise-amount.ts'
import type { TextDoc } from './text-lines.ts'
import { agreeOnTotal } from './total-agreement.ts'

/** Confidence of figures that add up (total = untaxed + tax): at least this, plus CHECKED_BONUS. */
const CHECKED_FLOOR = 0.9
const CHECKED_BONUS = 0.05
const CHECKED_CEILING = 0.99
/** A consistent total replaces the best-labelled one unless it is this much less sure. */
const CONSISTENT_MARGIN = 0.2
/** Net and tax read from a tax summary's row that makes the total (before the cross-check's boost). */
const SUMMARY_ROW = 0.85
/** Labels this sure name what is left to pay ("Balance Due", "Amount Due", "Total Due"). */
const DUE_LABEL = 0.97
/** A total below the untaxed amount, or a tax not below the total, is doubtful. */
const TOTAL_BELOW_UNTAXED = 0.7
const TAX_NOT_BELOW_TOTAL = 0.6
/** Figures derived from the other two (never read): share of the weaker source's confidence. */
const DERIVED_TOTAL = 0.6
const DERIVED_PART = 0.5
/** A total that equals the cash paid (tendered − change): at least this sure. */
const PAID_CHECKED = 0.9
/** The cash paid found only as an amount written without a total label ("Net Amount", a tax summary's gross). */
const PAID_UNLABELLED = 0.75
/** A total read by its labels that the document's other statements point away from. */
const DISPUTED = 0.75
/** Independent readings that overrule a total the labels confirmed. */
const OUTVOTED = 3
/** No labelled total: the largest amount, with or without a currency mark. */
const LARGEST_MARKED = 0.3
const LARGEST_BARE = 0.2

export const round2 = (n: number): number => Math.round(n * 100) / 100
export const sameAmount = (a: number, b: number): boolean => Math.abs(a - b) <= 0.011
const num = (c: Candidate | undefined): number | undefined => (typeof c?.value === 'number' ? c.value : undefined)

export type Totals = { amount?: Candidate; untaxed?: Candidate; tax?: Candidate }

export type TotalLists = {
  totals: Candidate[]
  untaxed: Candidate[]
  tax: Candidate[]
  rounding: Candidate[]
  /** Cash tendered and change (a till slip's payment lines). */
  tendered: Candidate[]
  change: Candidate[]
  /** The total labels found, for the readings whose figure OCR garbled. */
  totalHits?: LabelHit[]
}

/**
 * The total due, the untaxed amount and the tax, chosen by role and checked against each other:
 * on a till slip paid in cash the total is what was paid (tendered − change), never the tendered
 * amount or the change; a total that equals untaxed + tax (or that plus a cash rounding line)
 * wins over a better-labelled one that does not; figures that add up gain confidence, ones that
 * contradict lose it; a missing one is derived from the other two.
 */
export function reconcileTotals(lists: TotalLists, doc: TextDoc): Totals {
  const byLabels = reconcileByLabels(lists, doc.text)
  const agreed = agreeOnTotal({ ...lists, doc, totalHits: lists.totalHits ?? [] })
  if (!agreed) return byLabels
  const current = byLabels.amount
  if (
    current &&
    typeof current.value === 'number' &&
    Math.round(current.value * 100) === Math.round(agreed.value * 100)
  ) {
    // The same figure: as sure as the better of the two ways of reaching it.
    return { ...byLabels, amount: { ...current, confidence: Math.max(current.confidence, agreed.confidence) } }
  }
  // A total the labels confirmed (it adds up) yields only to one that more of the document states.
  // (A tax of nothing makes any total "add up" with a subtotal equal to it: no confirmation.)
  const confirmed =
    current !== undefined &&
    current.confidence >= CHECKED_FLOOR &&
    num(byLabels.tax) !== 0 &&
    agreed.readings < OUTVOTED
  if (confirmed || agreed.readings < 2) {
    // A lone reading that another place contradicts is less sure.
    return current
      ? { ...byLabels, amount: { ...current, confidence: Math.min(current.confidence, DISPUTED) } }
      : byLabels
  }
  const at = agreed.at
  const amount: Candidate = at
    ? { ...at, value: agreed.value, confidence: agreed.confidence }
    : { value: agreed.value, confidence: agreed.confidence, index: 0, currency: null, hit: null }
  return { ...byLabels, amount }
}

function reconcileByLabels(lists: TotalLists, text: string): Totals {
  const cash = cashPaid(lists.tendered, lists.change, text)
  const payment = new Set(lists.tendered.map((c) => c.index))
  if (cash) payment.add(cash.change.index)
  // "Balance" under the cash tendered is the change, not a balance due.
  const totals = lists.totals.filter((c) => !payment.has(c.index))
  let amount = bestCandidate(totals, true)
  let untaxed = bestCandidate(lists.untaxed)
  let tax = bestCandidate(lists.tax)
  let paidChecked = false
  let balanceAfterPayments = false
  if (cash) {
    const paid = (c: Candidate): boolean => sameAmount(c.value as number, cash.paid)
    const labelled = bestCandidate(totals.filter(paid), true)
    if (labelled) {
      amount = { ...labelled, confidence: Math.max(labelled.confidence, PAID_CHECKED) }
      paidChecked = true
    } else if (totals.length === 0) {
      // The total line was misread or is labelled as something else: the paid amount where it is written.
      const written = findAmounts(text)
        .filter((m) => m.quality === 1 && !payment.has(m.index) && sameAmount(m.value, cash.paid))
        .map(
          (m): Candidate => ({
            value: m.value,
            confidence: PAID_UNLABELLED,
            index: m.index,
            length: m.length,
            currency: m.currency,
            hit: null,
          }),
        )
      const pick =
        nearestBefore(lists.untaxed.filter(paid), cash.tendered.index) ?? nearestBefore(written, cash.tendered.index)
      if (pick) {
        amount = { ...pick, confidence: PAID_UNLABELLED }
        paidChecked = true
      }
    }
  }
  const u = num(untaxed)
  const t = num(tax)
  if (!paidChecked && u !== undefined && t !== undefined) {
    const sum = round2(u + t)
    const adjust = num(bestCandidate(lists.rounding)) ?? 0
    // After cash rounding the rounded total is what was paid.
    const targets = adjust ? [round2(sum + adjust), sum] : [sum]
    for (const target of targets) {
      const pick = bestCandidate(
        totals.filter((c) => sameAmount(c.value as number, target)),
        true,
      )
      if (pick && amount && isBalanceAfter(amount, pick)) {
        balanceAfterPayments = true
        break
      }
      if (pick && (!amount || pick.confidence >= amount.confidence - CONSISTENT_MARGIN)) {
        amount = pick
        break
      }
    }
  }
  const chosen = num(amount)
  if (chosen !== undefined && u !== undefined && t !== undefined && !addsUp(chosen, u, t)) {
    // Another tax line may be the one that adds up (e.g. "VAT 20%" next to "VAT No").
    const other = lists.tax.find((c) => addsUp(chosen, u, c.value as number))
    if (other) tax = other
  }
  // "Tax (6.35%) on $1,372.00   $87.12": the figure after the tax label is its base, the untaxed amount again. The
  // tax is then the amount on the same line that, added to the untaxed amount, makes the total.
  const net = num(untaxed)
  const taxRead = num(tax)
  const baseRead = tax?.hit && net !== undefined && taxRead !== undefined && sameAmount(taxRead, net)
  if (baseRead && chosen !== undefined && !addsUp(chosen, net, taxRead)) {
    const lineEnd = text.indexOf('\n', tax!.index)
    const rest = text.slice(tax!.index + (tax!.length ?? 0), lineEnd < 0 ? undefined : lineEnd)
    const onLine = findAmounts(rest).find((m) => addsUp(chosen, net, m.value))
    if (onLine) {
      tax = {
        ...tax!,
        value: onLine.value,
        index: tax!.index + (tax!.length ?? 0) + onLine.index,
        length: onLine.length,
      }
    }
  }
  // A tax summary of several rates ("7 %  1.066,86  74,68 ... / Summe  3.001,46  442,25  3.443,71"): the labels head
  // its columns, so the first rate's row was read; the row whose net and tax make the total is the summary's.
  const total = num(amount)
  const taxShown = num(untaxed) !== undefined || num(tax) !== undefined
  if (total !== undefined && !paidChecked && taxShown && !addsUp(total, num(untaxed), num(tax))) {
    const row = summaryRow(text, total)
    if (row) {
      untaxed = row.untaxed
      tax = row.tax
    }
  }
  const a = num(amount)
  const ut = num(untaxed)
  const tx = num(tax)
  if (a !== undefined && addsUp(a, ut, tx)) {
    const boost = (c: Candidate): Candidate => ({
      ...c,
      confidence: Math.min(CHECKED_CEILING, Math.max(c.confidence, CHECKED_FLOOR) + CHECKED_BONUS),
    })
    return { amount: boost(amount!), untaxed: boost(untaxed!), tax: boost(tax!) }
  }
  if (a !== undefined && ut !== undefined && a < ut && !balanceAfterPayments)
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
  return { amount: amount ?? largestAmount(text, payment), untaxed, tax }
}

const addsUp = (total: number, untaxed: number | undefined, tax: number | undefined): boolean =>
  untaxed !== undefined && tax !== undefined && sameAmount(total, round2(untaxed + tax))

/** Net and tax read from the last line holding two neighbouring money amounts, the larger first, that make `total`. */
function summaryRow(text: string, total: number): { untaxed: Candidate; tax: Candidate } | undefined {
  let found: { untaxed: Candidate; tax: Candidate } | undefined
  let offset = 0
  for (const line of text.split('\n')) {
    const money = findAmounts(line).filter((m) => m.quality === 1 && m.value > 0)
    for (let i = 0; i + 1 < money.length; i++) {
      const net = money[i]!
      const vat = money[i + 1]!
      if (vat.value < net.value && sameAmount(total, round2(net.value + vat.value))) {
        const at = (m: typeof net): Candidate => ({
          value: m.value,
          confidence: SUMMARY_ROW,
          index: offset + m.index,
          length: m.length,
          currency: m.currency,
          hit: null,
        })
        found = { untaxed: at(net), tax: at(vat) }
        break
      }
    }
    offset += line.length + 1
  }
  return found
}

/**
 * A due label written after a total that adds up, for less than it and more than nothing: a deposit, payment or
 * credit came off the total, and what is left is the total due ("Total 4,423.44 / Deposit -1,000.00 / Balance Due
 * 3,423.44"). A balance of nothing (a paid receipt) leaves the total as it is.
 */
function isBalanceAfter(due: Candidate, total: Candidate): boolean {
  const left = num(due)
  const whole = num(total)
  return (
    (due.hit?.label.weight ?? 0) >= DUE_LABEL &&
    due.index > total.index &&
    left !== undefined &&
    whole !== undefined &&
    left > 0 &&
    left < whole
  )
}

/**
 * What was paid in cash: the amount tendered minus the change on the line right after it (a blank
 * line may sit between). Undefined without both, or when they do not leave a positive payment.
 */
function cashPaid(
  tendered: readonly Candidate[],
  change: readonly Candidate[],
  text: string,
): { paid: number; tendered: Candidate; change: Candidate } | undefined {
  for (const t of tendered) {
    const end = t.index + (t.length ?? 0)
    const next = change.find((c) => c.hit && c.hit.start > end && NEXT_LINE.test(text.slice(end, c.hit.start)))
    const given = num(t)
    const back = num(next)
    if (next && given !== undefined && back !== undefined && back >= 0 && given > back)
      return { paid: round2(given - back), tendered: t, change: next }
  }
  return undefined
}

const NEXT_LINE = /^[ \t]*\n(?:[ \t]*\n)?[ \t]*$/

/** The candidate written last before `at`, else the first after it. */
function nearestBefore(list: readonly Candidate[], at: number): Candidate | undefined {
  const before = list.filter((c) => c.index < at).sort((a, b) => b.index - a.index)[0]
  return before ?? [...list].sort((a, b) => a.index - b.index)[0]
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

function largestAmount(text: string, payment: ReadonlySet<number>): Candidate | undefined {
  // Never the cash tendered or the change.
  const money = findAmounts(text).filter((m) => m.quality === 1 && !payment.has(m.index))
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
