import type { Candidate } from './field-candidates.ts'
import type { LabelHit } from './label-matching.ts'
import { findAmounts } from './normalise-amount.ts'
import { ocrVariants } from './ocr-confusions.ts'
import { lineIndexAt, type TextDoc } from './text-lines.ts'

/**
 * The total chosen by agreement. A document states what is due or was paid in several places: a labelled total, the
 * cash tendered minus the change, the subtotal plus tax (plus a rounding line), the same figure repeated on another
 * line. Each is a reading; readings that agree confirm each other, so a total read once under a strong label loses to
 * one that three independent lines state. A misread figure (OCR: 5/6, 0/8, 1/7, 3/8, a lost decimal point) stands for
 * the value it could be only when an arithmetic check confirms that value.
 */

/** Weight of each kind of reading. Checks are arithmetic facts; a label reading weighs its label's strength. */
const CHECK_WEIGHT = 1
/** A labelled total plus the rounding line under it (the rounded total that was paid). */
const ROUNDED_WEIGHT = 0.8
/** The same amount written on another line with no other role (a card slip, a repeated total). */
const REPEAT_WEIGHT = 0.35
const MAX_REPEATS = 2
/** A labelled total inside a tax summary block, or on a line that also names tax or quantities. */
const DOUBTFUL_LABEL = 0.5
/** A misread total confirmed by a check: share of its label's weight. */
const VARIANT_SHARE = 0.6
/** Tax is at most this share of the amount before it (the highest VAT rates are near 27%). */
const MAX_TAX_SHARE = 0.3
/** A rounding adjustment is at most this (cash rounding to 0.05 or 0.10). */
const MAX_ROUNDING = 0.1
/** Cash rounding goes to whole multiples of 5 cents (or 10): a rounded total is one. */
const ROUNDED_TO_CENTS = 5
/** Words of a change line, wherever it sits on the line ("Item Count 2   Change Amt  19.00"). */
const CHANGE_WORD = /\b(?:change|kembali|baki|rückgeld|zurück|rendu|monnaie|cambio|resto|wisselgeld|reszta)\b/i

/** Confidence by evidence: two or more independent readings, a check among them; label only; check only. */
const CONFIRMED = 0.95
const CONFIRMED_WITHOUT_LABEL = 0.9
const CONFIRMED_VARIANT = 0.88
const SINGLE_LABEL_SHARE = 0.85
const SINGLE_CHECK = 0.7

/** The heading of a tax summary (its "Total" line is the taxable base and tax, not what was paid). */
const SUMMARY_HEADING =
  /\b(?:(?:GST|VAT|TAX|MwSt|USt|TVA|IVA|BTW)\s*(?:SUMMARY|ANALYSIS|BREAKDOWN)|TAX\s*CODE|Steuer\s*übersicht|MwSt[.-]?\s*Satz|Récapitulatif|Riepilogo)/i
/** A total label on a line that is about tax or quantities ("GST included in total", "Total Qty"). */
const NOT_PAID_LINE =
  /\b(?:qty|quantity|items?|item\s*count|stamps?|points?)\b|\b(?:GST|VAT|tax|MwSt|TVA|IVA|BTW)\b[^\n]*\bincl(?:uded|\.)?\s+in\b/i
const SUMMARY_SPAN = 6
/**
 * A line that states a total in words the labels do not cover ("Total Sales (Inclusive of GST) : 94.87"): a total
 * word, and no word that makes it a part ("Sub", "excl.", "Qty", a tax line) unless it says the tax is included.
 */
const TOTAL_WORD = /\b(?:total|jumlah|gesamt|summe|totaal|totale|importe|montant)\b/i
const PART_WORD =
  /\b(?:sub|excl\w*|exclusive|excluding|before|net|nett|qty|quantity|items?|discount|savings?|tax|gst|vat|mwst|tva|iva|btw|points?)\b|sub-?total/i
const TAX_INCLUDED = /\b(?:incl\w*|inclusive|inkl\w*|ttc)\b/i
const TOTAL_LINE_WEIGHT = 0.75
const BEFORE_TAX = /\b(?:excl\w*|exclusive|excluding|before|exkl\w*|ohne|hors|sub)\b|sub-?total/i
/** A subtotal plus a misread tax (a lost decimal point): weaker than a clean sum. */
const VARIANT_CHECK_WEIGHT = 0.7

export type AgreementInputs = {
  doc: TextDoc
  totals: readonly Candidate[]
  /** The total labels found (a line whose figure did not read as an amount still says where the total is). */
  totalHits: readonly LabelHit[]
  untaxed: readonly Candidate[]
  tax: readonly Candidate[]
  rounding: readonly Candidate[]
  tendered: readonly Candidate[]
  change: readonly Candidate[]
}

export type AgreedTotal = {
  value: number
  confidence: number
  /** Where it is written (a label reading or a repeat); undefined when only derived. */
  at?: Candidate
  /** Independent readings that state this value. */
  readings: number
  /** Whether an arithmetic check (tendered − change, subtotal + tax, total + rounding) is among them. */
  checked: boolean
}

/**
 * What an arithmetic check starts from: cash paid (tendered − change), subtotal + tax, a total plus its rounding line,
 * a tax summary's net + tax. Checks from different sources are independent readings.
 */
type CheckSource = 'paid' | 'sum' | 'rounded' | 'summary'

/** A statement of the total on a line (a label, a misread figure under one), or an arithmetic check. */
type Reading = { value: number; weight: number; at?: Candidate } & (
  | { kind: 'label' | 'variant'; line: number }
  | { kind: 'check'; source: CheckSource }
)
type LineReading = Extract<Reading, { line: number }>
type CheckReading = Extract<Reading, { kind: 'check' }>

const cents = (n: number): number => Math.round(n * 100)

export function agreeOnTotal(inputs: AgreementInputs): AgreedTotal | undefined {
  const { doc } = inputs
  const { text } = doc
  const lineOf = (index: number): number => lineIndexAt(doc, index)
  const lines = doc.lines.map((l) => l.text)
  const summaryLines = new Set<number>()
  lines.forEach((line, i) => {
    if (SUMMARY_HEADING.test(line)) for (let k = i; k <= i + SUMMARY_SPAN; k++) summaryLines.add(k)
  })

  const readings: Reading[] = []
  for (const c of inputs.totals) {
    if (typeof c.value !== 'number' || c.value <= 0) continue
    const line = lineOf(c.index)
    const doubtful = summaryLines.has(line) || NOT_PAID_LINE.test(lines[line] ?? '')
    // The candidate's own confidence: its label's strength, where the value sat, how well-formed it is (a bare "12'"
    // under a column header is no total).
    const weight = c.confidence * (doubtful ? DOUBTFUL_LABEL : 1)
    readings.push({ value: c.value, weight, kind: 'label', line, at: c })
  }
  // What each total label's line could say, had OCR read it right.
  for (const hit of inputs.totalHits) {
    const line = lineOf(hit.end)
    const end = doc.lines[line]?.end ?? text.length
    const doubtful = summaryLines.has(line) || NOT_PAID_LINE.test(lines[line] ?? '')
    const weight = hit.label.weight * (doubtful ? DOUBTFUL_LABEL : 1) * VARIANT_SHARE
    for (const v of ocrVariants(text.slice(hit.end, end))) {
      const at: Candidate = {
        value: v.value,
        confidence: 0,
        index: hit.end + v.index,
        length: v.length,
        currency: null,
        hit,
      }
      readings.push({ value: v.value, weight, kind: 'variant', line, at })
    }
  }
  // Lines that state a total in other words: their last amount, and what it could be had OCR read it right.
  lines.forEach((text, line) => {
    if (!TOTAL_WORD.test(text) || summaryLines.has(line) || NOT_PAID_LINE.test(text)) return
    if (PART_WORD.test(text) && !TAX_INCLUDED.test(text)) return
    const last = findAmounts(text)
      .filter((m) => m.value > 0)
      .at(-1)
    const start = doc.lines[line]?.start ?? 0
    if (last)
      readings.push({
        value: last.value,
        weight: TOTAL_LINE_WEIGHT,
        kind: 'label',
        line,
        at: {
          value: last.value,
          confidence: 0,
          index: start + last.index,
          length: last.length,
          currency: null,
          hit: null,
        },
      })
  })
  // Checks: cash paid, subtotal + tax (+ rounding), a labelled total plus its rounding.
  // A check's `source` tells independent checks apart (two of them are two readings).
  const checks: { value: number; weight: number; source: CheckSource }[] = []
  for (const paid of cashPayments(inputs, lines, lineOf))
    checks.push({ value: paid, weight: CHECK_WEIGHT, source: 'paid' })
  // A tax summary's row of net and tax: together they are the gross the document was charged.
  for (const line of summaryLines) {
    const money = findAmounts(lines[line] ?? '').filter((m) => m.quality === 1 && m.value > 0)
    for (let i = 0; i + 1 < money.length; i++) {
      const [net, tax] = [(money[i] as { value: number }).value, (money[i + 1] as { value: number }).value]
      if (tax < net * MAX_TAX_SHARE) checks.push({ value: net + tax, weight: CHECK_WEIGHT, source: 'summary' })
    }
  }
  // A rounding line's figure, read again where OCR garbled it ("02", "-.02"); its sign is often lost, so both
  // directions are tried and a result counts only when it is a whole multiple of the smallest coin rounded to.
  const roundings = [
    ...new Set(
      // Read again only a figure that cannot be a rounding as read ("02", "-001"); "0.00" means none.
      inputs.rounding.flatMap((c) =>
        typeof c.value === 'number' && Math.abs(c.value) <= MAX_ROUNDING ? [Math.abs(c.value)] : readAgain(text, c),
      ),
    ),
  ].filter((v) => v !== 0 && Math.abs(v) <= MAX_ROUNDING)
  const rounded = (total: number): number[] =>
    roundings.flatMap((r) => [total + r, total - r]).filter((v) => cents(v) % ROUNDED_TO_CENTS === 0)
  // "Rounding  177.20": a rounding label over a figure larger than any adjustment names the rounded total.
  for (const c of inputs.rounding)
    if (typeof c.value === 'number' && c.value > 1)
      readings.push({ value: c.value, weight: TOTAL_LINE_WEIGHT, kind: 'label', line: lineOf(c.index), at: c })
  const taxes = [
    ...numbers(inputs.tax).map((t) => ({ t, weight: CHECK_WEIGHT })),
    ...inputs.tax.flatMap((c) => readAgain(text, c).map((t) => ({ t, weight: VARIANT_CHECK_WEIGHT }))),
  ]
  for (const u of [...numbers(inputs.untaxed), ...subtotalLines(lines)]) {
    for (const { t, weight } of taxes) {
      if (t <= 0 || t > u * MAX_TAX_SHARE) continue
      checks.push({ value: u + t, weight, source: 'sum' })
      for (const value of rounded(u + t)) checks.push({ value, weight, source: 'sum' })
    }
  }
  for (const { value, weight, source } of checks) if (value > 0) readings.push({ value, weight, kind: 'check', source })
  for (const r of readings.filter((x) => x.kind === 'label'))
    for (const value of rounded(r.value))
      readings.push({ value, weight: ROUNDED_WEIGHT, kind: 'check', source: 'rounded', at: r.at })

  // Repeats: the same amount on a line that has no other role (not subtotal, tax, change, rounding or a summary).
  const otherRole = new Set<number>()
  // The cash line is the paid check's own source, not another statement of it.
  for (const c of [...inputs.untaxed, ...inputs.tax, ...inputs.change, ...inputs.rounding, ...inputs.tendered])
    otherRole.add(lineOf(c.index))
  const repeats = new Map<number, { lines: Set<number>; at: Candidate }>()
  for (const m of findAmounts(text)) {
    if (m.quality < 1 || m.value <= 0) continue
    const line = lineOf(m.index)
    if (otherRole.has(line) || summaryLines.has(line)) continue
    const key = cents(m.value)
    const entry = repeats.get(key) ?? {
      lines: new Set<number>(),
      at: { value: m.value, confidence: 0, index: m.index, length: m.length, currency: m.currency, hit: null },
    }
    entry.lines.add(line)
    repeats.set(key, entry)
  }

  type Scored = AgreedTotal & { score: number; laterAt: number }
  let best: Scored | undefined
  const scored = new Map<number, Scored>()
  for (const key of new Set(readings.map((r) => cents(r.value)))) {
    const same = readings.filter((r) => cents(r.value) === key)
    const labels = same.filter((r): r is LineReading => r.kind === 'label')
    // A guess (a misread figure) needs a clean check; a check built on a guess confirms only a clean reading.
    const allChecks = same.filter((r): r is CheckReading => r.kind === 'check')
    const cleanChecks = allChecks.filter((r) => r.weight >= ROUNDED_WEIGHT)
    const checks = labels.length ? allChecks : cleanChecks
    const checked = checks.length > 0
    const labelled = new Set(labels.map((r) => r.line))
    const variants = cleanChecks.length
      ? same.filter((r): r is LineReading => r.kind === 'variant' && !labelled.has(r.line))
      : []
    const repeatLines = [...(repeats.get(key)?.lines ?? [])].filter((l) => !labelled.has(l))
    const repeatCount = Math.min(MAX_REPEATS, repeatLines.length)
    const score =
      sumBestPerLine(labels) +
      Math.max(0, ...checks.map((r) => r.weight)) +
      Math.max(0, ...variants.map((r) => r.weight)) +
      repeatCount * REPEAT_WEIGHT
    const count =
      labelled.size +
      new Set(checks.map((r) => r.source)).size +
      (variants.length && !labelled.size ? 1 : 0) +
      repeatCount
    const strongest = labels.reduce<LineReading | undefined>((a, r) => (!a || r.weight > a.weight ? r : a), undefined)
    const at = strongest?.at ?? variants[0]?.at ?? repeats.get(key)?.at
    const confidence =
      count >= 2 && checked
        ? labels.length
          ? CONFIRMED
          : variants.length
            ? CONFIRMED_VARIANT
            : CONFIRMED_WITHOUT_LABEL
        : count >= 2
          ? Math.min(CONFIRMED_WITHOUT_LABEL, (strongest?.weight ?? REPEAT_WEIGHT) + REPEAT_WEIGHT / 2)
          : labels.length
            ? (strongest?.weight ?? 0) * SINGLE_LABEL_SHARE
            : SINGLE_CHECK
    const laterAt = at?.index ?? -1
    const candidate = {
      value: key / 100,
      confidence,
      at,
      readings: count,
      checked,
      score,
      laterAt,
    }
    scored.set(key, candidate)
    if (!best || score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && laterAt > best.laterAt))
      best = candidate
  }
  if (!best) return undefined
  // With a rounding line, what was paid is the rounded figure: the checks that confirm the total before rounding
  // (a tax summary, subtotal + tax) confirm the rounded one too.
  const roundedUp = rounded(best.value)
    .map((v) => scored.get(cents(v)))
    .find((c) => c !== undefined)
  if (roundedUp)
    best = {
      ...roundedUp,
      confidence: Math.max(roundedUp.confidence, best.confidence),
      readings: roundedUp.readings + best.readings,
    }
  const { score: _score, laterAt: _laterAt, ...agreed } = best
  return agreed
}

/** One reading per line: the strongest label on it (a line read twice is still one statement). */
function sumBestPerLine(labels: readonly LineReading[]): number {
  const perLine = new Map<number, number>()
  for (const r of labels) perLine.set(r.line, Math.max(perLine.get(r.line) ?? 0, r.weight))
  return [...perLine.values()].reduce((a, b) => a + b, 0)
}

/** Amounts of lines that state a total before tax in words the labels do not cover ("Total Sales (Excluding GST)"). */
function subtotalLines(lines: readonly string[]): number[] {
  const found: number[] = []
  for (const text of lines) {
    if (!TOTAL_WORD.test(text) || !BEFORE_TAX.test(text)) continue
    const last = findAmounts(text)
      .filter((m) => m.value > 0)
      .at(-1)
    if (last) found.push(last.value)
  }
  return found
}

/** What a figure could be had OCR read it right (its written text, read again with the usual confusions). */
function readAgain(text: string, c: Candidate): number[] {
  if (c.length === undefined) return []
  return ocrVariants(text.slice(c.index, c.index + c.length)).map((v) => v.value)
}

function numbers(list: readonly Candidate[]): number[] {
  return [...new Set(list.map((c) => c.value).filter((v): v is number => typeof v === 'number'))]
}

/** Tendered − change for each tendered line and a change line within the next three lines. */
function cashPayments(inputs: AgreementInputs, lines: readonly string[], lineOf: (index: number) => number): number[] {
  const paid: number[] = []
  for (const t of inputs.tendered) {
    if (typeof t.value !== 'number' || t.value <= 0) continue
    const line = lineOf(t.index)
    const changes = inputs.change.flatMap((c) =>
      typeof c.value === 'number' ? [{ value: c.value, line: lineOf(c.index) }] : [],
    )
    for (let k = line + 1; k <= line + 3; k++) {
      if (!CHANGE_WORD.test(lines[k] ?? '')) continue
      const last = findAmounts(lines[k] ?? '').at(-1)
      if (last) changes.push({ value: Math.abs(last.value), line: k })
    }
    for (const c of changes) {
      if (c.value < 0 || c.value >= t.value) continue
      const gap = c.line - line
      if (gap >= 1 && gap <= 3) paid.push(t.value - c.value)
    }
  }
  return paid
}
