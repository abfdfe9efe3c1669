import { bestCandidate, collectCandidates, type Candidate, type FieldSpec } from './field-candidates.ts'
import { cleanIssuer, findIssuerByLayout } from './find-issuer.ts'
import { INVOICE_FIELD_SPECS, INVOICE_STOP_LABELS } from './invoice-labels.ts'
import { findAmounts } from './normalise-amount.ts'
import { inferCurrency } from './normalise-currency.ts'
import { findDates, inferDateOrder, type DateOrder } from './normalise-date.ts'
import { NOT_FOUND, type FieldValue } from './schema.ts'
import { toTextDoc } from './text-lines.ts'

export const INVOICE_FIELDS = ['invoice_number', 'date', 'due_date', 'issuer', 'amount', 'amount_untaxed', 'tax', 'currency'] as const
export type InvoiceField = (typeof INVOICE_FIELDS)[number]
export type InvoiceFields = Record<InvoiceField, FieldValue>

/** Currencies written with a bare "$". */
const DOLLARS = new Set(['USD', 'AUD', 'CAD', 'NZD', 'SGD', 'HKD', 'MXN'])

const round2 = (n: number): number => Math.round(n * 100) / 100
const conf = (n: number): number => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100
const same = (a: number, b: number): boolean => Math.abs(a - b) <= 0.011
const num = (c: Candidate | undefined): number | undefined => (typeof c?.value === 'number' ? c.value : undefined)
const field = (c: Candidate | undefined | null): FieldValue => (c ? { value: c.value, confidence: conf(c.confidence) } : { ...NOT_FOUND })

/** The date order of the document: read from its unambiguous dates, else assumed from the currency. */
export function documentDateOrder(text: string, currency: string | undefined): { order?: DateOrder; guessed: boolean } {
  const inferred = inferDateOrder(text)
  if (inferred) return { order: inferred, guessed: false }
  return { order: currency === 'USD' ? 'MDY' : 'DMY', guessed: true }
}

/**
 * The built-in invoice extractor. Works on layouts it has never seen: many label synonyms per
 * field (weighted by how telling they are), labels that hide shorter ones ("Subtotal" vs "Total",
 * "VAT No" vs "VAT"), values on the label's line or below it, the issuer from a label or from
 * the layout, the currency from anywhere, and cross-checks (total = subtotal + tax) that raise or
 * lower confidence and fill a missing figure.
 * `extraLabels` adds labels per field (from a declared schema that extends the built-in one).
 */
export function extractInvoice(text: string, options: { extraLabels?: Partial<Record<InvoiceField, string[]>> } = {}): InvoiceFields {
  const doc = toTextDoc(text)
  const docCurrency = inferCurrency(doc.text)
  const { order, guessed } = documentDateOrder(doc.text, docCurrency?.code)
  const specs: FieldSpec[] = INVOICE_FIELD_SPECS.map((spec) => {
    const extra = options.extraLabels?.[spec.name as InvoiceField] ?? []
    return extra.length ? { ...spec, labels: [...extra.map((t) => ({ text: t, weight: 0.95 })), ...spec.labels] } : spec
  })
  const ctx = { doc, dateOrder: order, dateOrderGuessed: guessed }
  const { hits, candidates } = collectCandidates(ctx, specs, INVOICE_STOP_LABELS)
  const list = (name: InvoiceField): Candidate[] => candidates.get(name) ?? []

  // Invoice number.
  let invoiceNumber = bestCandidate(list('invoice_number'))
  if (!invoiceNumber) {
    const m = /(?<![\p{L}\p{N}])((?:INV|INVOICE|BILL|RCPT|RE)[-#/]?\d[\p{L}\p{N}\-/_.]*\d|(?:INV|BILL)[-#/]?\d)/iu.exec(doc.text)
    if (m) invoiceNumber = { value: m[1] as string, confidence: 0.5, index: m.index, currency: null, hit: null }
  }

  // Dates.
  let date = bestCandidate(list('date'))
  let dueDate = bestCandidate(list('due_date'))
  if (!date) {
    const first = findDates(doc.text, { order, guessed }).find((d) => !dueDate || d.index !== dueDate.index)
    if (first) date = { value: first.value, confidence: 0.4 * first.quality, index: first.index, currency: null, hit: null }
  }
  if (!dueDate && date) {
    const terms =
      /(?:\bnet\s*(\d{1,3})\b|\b(?:within|in)\s+(\d{1,3})\s*days?\b|\b(\d{1,3})\s*days?\s*(?:net|from|after|of)\b|\bterms?\s*[:\-]?\s*(\d{1,3})\s*days?\b)/i.exec(doc.text)
    const days = Number(terms?.[1] ?? terms?.[2] ?? terms?.[3] ?? terms?.[4])
    if (Number.isFinite(days) && days > 0 && days <= 365) {
      const due = new Date(`${date.value as string}T00:00:00Z`)
      due.setUTCDate(due.getUTCDate() + days)
      dueDate = { value: due.toISOString().slice(0, 10), confidence: 0.6 * date.confidence, index: terms!.index, currency: null, hit: null }
    }
  }
  if (date && dueDate && typeof date.value === 'string' && typeof dueDate.value === 'string' && dueDate.value < date.value) {
    date = { ...date, confidence: date.confidence * 0.8 }
    dueDate = { ...dueDate, confidence: dueDate.confidence * 0.8 }
  }

  // Money: total due, amount before tax, tax, checked against each other.
  const totals = list('amount')
  let amount = bestCandidate(totals, true)
  let untaxed = bestCandidate(list('amount_untaxed'))
  let tax = bestCandidate(list('tax'))
  const u = num(untaxed)
  const t = num(tax)
  if (u !== undefined && t !== undefined) {
    const sum = round2(u + t)
    const consistent = totals.filter((c) => same(c.value as number, sum))
    const pick = bestCandidate(consistent, true)
    if (pick && amount && pick.confidence >= amount.confidence - 0.2) amount = pick
  }
  const chosenTotal = num(amount)
  if (chosenTotal !== undefined && u !== undefined && t !== undefined && !same(chosenTotal, round2(u + t))) {
    // Another tax line may be the one that adds up (e.g. "VAT 20%" next to "VAT No").
    const other = list('tax').find((c) => same(chosenTotal, round2(u + (c.value as number))))
    if (other) tax = other
  }
  const a = num(amount)
  const ut = num(untaxed)
  const tx = num(tax)
  if (a !== undefined && ut !== undefined && tx !== undefined && same(a, round2(ut + tx))) {
    const boost = (c: Candidate): Candidate => ({ ...c, confidence: Math.min(0.99, Math.max(c.confidence, 0.9) + 0.05) })
    amount = boost(amount!)
    untaxed = boost(untaxed!)
    tax = boost(tax!)
  } else {
    if (a !== undefined && ut !== undefined && a < ut) amount = { ...amount!, confidence: amount!.confidence * 0.7 }
    if (a !== undefined && tx !== undefined && tx >= a) tax = { ...tax!, confidence: tax!.confidence * 0.6 }
    if (a === undefined && ut !== undefined && tx !== undefined) {
      amount = { value: round2(ut + tx), confidence: 0.6 * Math.min(untaxed!.confidence, tax!.confidence), index: tax!.index, currency: tax!.currency ?? untaxed!.currency, hit: null }
    } else if (a !== undefined && ut === undefined && tx !== undefined && tx < a) {
      untaxed = { value: round2(a - tx), confidence: 0.5 * Math.min(amount!.confidence, tax!.confidence), index: amount!.index, currency: amount!.currency, hit: null }
    } else if (a !== undefined && ut !== undefined && tx === undefined && a >= ut) {
      tax = { value: round2(a - ut), confidence: 0.5 * Math.min(amount!.confidence, untaxed!.confidence), index: amount!.index, currency: amount!.currency, hit: null }
    }
  }
  if (!amount) {
    const money = findAmounts(doc.text).filter((m) => m.quality === 1)
    const marked = money.filter((m) => m.currency)
    const pool = marked.length ? marked : money
    const largest = pool.reduce<(typeof pool)[number] | undefined>((best, m) => (!best || m.value > best.value ? m : best), undefined)
    if (largest) amount = { value: largest.value, confidence: marked.length ? 0.3 : 0.2, index: largest.index, currency: largest.currency, hit: null }
  }

  // Currency: labelled, else written next to the total, else whatever the document uses most.
  let currency = bestCandidate(list('currency'))
  if (!currency) {
    const near = [amount, untaxed, tax, ...totals].find((c) => c?.currency)
    const otherDollar = near?.currency === 'USD' && docCurrency && DOLLARS.has(docCurrency.code) && docCurrency.code !== 'USD'
    if (near?.currency && otherDollar) currency = { value: docCurrency.code, confidence: 0.8, index: near.index, currency: docCurrency.code, hit: null }
    else if (near?.currency) currency = { value: near.currency, confidence: 0.9, index: near.index, currency: near.currency, hit: null }
    else if (docCurrency) currency = { value: docCurrency.code, confidence: docCurrency.confidence, index: 0, currency: docCurrency.code, hit: null }
  }

  // Issuer: labelled ("From:", "Seller"), else from the layout.
  let issuer = bestCandidate(list('issuer'))
  if (issuer) issuer = { ...issuer, value: cleanIssuer(String(issuer.value)) }
  if (!issuer || issuer.confidence < 0.6 || !issuer.value) {
    const byLayout = findIssuerByLayout(doc, hits)
    if (byLayout && (!issuer || !issuer.value || byLayout.confidence > issuer.confidence)) issuer = byLayout
  }

  return {
    invoice_number: field(invoiceNumber),
    date: field(date),
    due_date: field(dueDate),
    issuer: field(issuer && issuer.value ? issuer : null),
    amount: field(amount),
    amount_untaxed: field(untaxed),
    tax: field(tax),
    currency: field(currency),
  }
}
