import { LOCALES, type Locale, type LocaleId } from './corpus-locales.ts'

/** A small seeded PRNG (mulberry32): the corpus is the same on every run for a seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Rand = ReturnType<typeof rng>
export const pick = <T>(r: Rand, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T
export const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1))

/** What the extractor should find. */
export type Expected = {
  invoice_number?: string
  date: string
  amount: number
  currency: string
  amount_untaxed?: number
  tax?: number
}

/** One item row: `detail` is a second description line (a wrapped description), part of the description's truth. */
export type Line = { description: string; qty: number; price: number; detail?: string }

/** The line-item truth of a document: what the item table says, row by row (DESIGN, Extraction: `line_items`). */
export type ItemTruth = { description: string; quantity: number; unit_price: number; amount: number }

/** A small deterministic hash of a string (FNV-1a), to seed a document's own variations without moving the main stream. */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** The truth rows of item lines: amount = quantity × unit price, rounded to cents as printed. */
export function itemTruth(lines: readonly Line[]): ItemTruth[] {
  return lines.map((l) => ({
    description: l.detail ? `${l.description} ${l.detail}` : l.description,
    quantity: l.qty,
    unit_price: l.price,
    amount: Math.round(l.qty * l.price * 100) / 100,
  }))
}

/** One generated invoice or receipt, before layout. */
export type DocSpec = {
  id: string
  kind: 'invoice' | 'receipt'
  locale: Locale
  issuer: string
  street: string
  city: string
  customer: string
  /** Written id and the label in front of it (null: the document has none). */
  number: { label: string; value: string } | null
  dateText: string
  /** The pattern the dates are written in (corpus-locales `dates`). */
  datePattern: string
  dueText: string | null
  /** A date that is not the invoice's (delivery, order, print), written before or after the invoice date. */
  otherDate?: { label: string; text: string; before: boolean }
  /** A tax summary block (net, tax, gross per rate) under the totals: a second "total" that is not the one due. */
  summary?: boolean
  /** Print faded in a scan (thermal paper, a worn toner): digits misread as on real receipts. */
  faded?: boolean
  labels: { date: string; due: string; subtotal: string; tax: string; total: string; billTo: string; title: string }
  lines: Line[]
  /** How the item table is drawn: a position column (`Pos.`), ruled borders. */
  table?: { position: boolean; bordered: boolean }
  subtotal: number
  tax: number
  total: number
  money: (n: number) => string
  expected: Expected
}

const WORDS_A = ['Northwind', 'Bluepeak', 'Brightwater', 'Silverline', 'Oakridge', 'Redfern', 'Kestrel', 'Harbour']
const WORDS_B = ['Trading', 'Studio', 'Logistics', 'Consulting', 'Supplies', 'Systems', 'Print', 'Foods']
const HOLDOUT_A = ['Juniper', 'Meridian', 'Copperfield', 'Stonebridge', 'Larkspur', 'Tidewater', 'Ashgrove']
const HOLDOUT_B = ['Partners', 'Works', 'Digital', 'Engineering', 'Traders', 'Labs', 'Atelier']
const CUSTOMERS = ['Acme Retail', 'Globex Services', 'Initech Holdings', 'Umbrella Foods', 'Stark Builders']
const ITEMS = ['Consulting hours', 'Design work', 'Hosting (monthly)', 'Printer paper A4', 'Support plan', 'Cables']

export function formatNumber(n: number, locale: Pick<Locale, 'decimal' | 'group'>): string {
  const [whole, cents] = Math.abs(n).toFixed(2).split('.') as [string, string]
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, locale.group)
  return `${n < 0 ? '-' : ''}${grouped}${locale.decimal}${cents}`
}

export function formatDate(date: Date, pattern: string, months: readonly string[]): string {
  const d = date.getUTCDate()
  const m = date.getUTCMonth() + 1
  const y = date.getUTCFullYear()
  const month = months[m - 1] as string
  return pattern
    .replace('{dd}', String(d).padStart(2, '0'))
    .replace('{d}', String(d))
    .replace('{mm}', String(m).padStart(2, '0'))
    .replace('{month}', month)
    .replace('{mon}', month.slice(0, 3))
    .replace('{m}', String(m))
    .replace('{yyyy}', String(y))
    .replace('{yy}', String(y).slice(2))
}

const iso = (d: Date): string => d.toISOString().slice(0, 10)

function invoiceNumber(r: Rand, year: number): string {
  const n = int(r, 1, 99999)
  return pick(r, [
    `INV-${year}-${String(n).padStart(4, '0')}`,
    `RE-${10000 + n}`,
    `F${year}/${n % 1000}`,
    `${year}-${String(n % 10000).padStart(4, '0')}`,
    `A-${String(n).padStart(6, '0')}`,
    `FA${String(year).slice(2)}-${String(n % 10000).padStart(4, '0')}`,
    `INV${String(n).padStart(5, '0')}`,
    `${n + 100000}`,
  ])
}

/**
 * One invoice's content for a locale. `holdout` draws issuer names from a separate list, so the
 * held-out part never repeats a tuned issuer.
 */
export function invoiceSpec(
  r: Rand,
  id: string,
  localeId: LocaleId,
  opts: { holdout: boolean; pdfSafe: boolean; reference?: boolean },
): DocSpec {
  const locale = LOCALES[localeId]
  const issuer = `${pick(r, opts.holdout ? HOLDOUT_A : WORDS_A)} ${pick(r, opts.holdout ? HOLDOUT_B : WORDS_B)} ${pick(r, locale.suffixes)}`
  const date = new Date(Date.UTC(int(r, 2022, 2025), int(r, 0, 11), int(r, 1, 28)))
  const due = new Date(date.getTime() + pick(r, [14, 30, 45]) * 86_400_000)
  const datePattern = pick(r, locale.dates)
  const lines: Line[] = Array.from({ length: int(r, 1, 5) }, () => ({
    description: pick(r, ITEMS),
    qty: int(r, 1, 12),
    price: int(r, 500, 90_000) / 100,
  }))
  const subtotal = Math.round(lines.reduce((s, l) => s + l.qty * l.price, 0) * 100) / 100
  const tax = Math.round(subtotal * locale.taxRate) / 100
  const total = Math.round((subtotal + tax) * 100) / 100
  const marks = locale.marks.filter((m) => m.pdfSafe || !opts.pdfSafe)
  const mark = pick(r, marks).pattern
  const money = (n: number): string => mark.replace('{n}', formatNumber(n, locale))
  const numberValue = invoiceNumber(r, date.getUTCFullYear())
  const number = opts.reference
    ? { label: pick(r, locale.reference), value: `${pick(r, ['BK', 'ORD', 'CNF', ''])}${int(r, 100000, 999999)}` }
    : { label: pick(r, locale.number), value: numberValue }
  const taxLabel = pick(r, locale.tax).replace('{r}', String(locale.taxRate))
  return {
    id,
    kind: 'invoice',
    locale,
    issuer,
    street: pick(r, locale.streets),
    city: pick(r, locale.cities),
    customer: pick(r, CUSTOMERS),
    number,
    dateText: formatDate(date, datePattern, locale.months),
    datePattern,
    dueText: r() < 0.7 ? formatDate(due, datePattern, locale.months) : null,
    labels: {
      date: pick(r, locale.date),
      due: pick(r, locale.due),
      subtotal: pick(r, locale.subtotal),
      tax: taxLabel,
      total: pick(r, locale.total),
      billTo: pick(r, locale.billTo),
      title: pick(r, locale.title),
    },
    lines,
    subtotal,
    tax,
    total,
    money,
    expected: { invoice_number: number.value, date: iso(date), amount: total, currency: locale.currency },
  }
}
