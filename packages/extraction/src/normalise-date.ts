/** How to read an all-numeric date whose first two parts are both ≤ 12. */
export type DateOrder = 'DMY' | 'MDY'

export type FoundDate = {
  /** YYYY-MM-DD */
  value: string
  index: number
  length: number
  /** 1 for an unambiguous date; lower when day and month could be swapped. */
  quality: number
  /** Set for numeric day/month dates: the order it was read in, and whether that was a guess. */
  order?: DateOrder
  ambiguous: boolean
}

const MONTHS: ReadonlyArray<[number, string[]]> = [
  [1, ['january', 'jan', 'januar', 'jänner', 'janvier', 'janv', 'enero', 'ene', 'januari', 'gennaio', 'gen']],
  [2, ['february', 'feb', 'febr', 'februar', 'février', 'fevrier', 'févr', 'fevr', 'febrero', 'februari', 'febbraio']],
  [3, ['march', 'mar', 'märz', 'maerz', 'mrz', 'mars', 'marzo', 'maart', 'mär']],
  [4, ['april', 'apr', 'avril', 'avr', 'abril', 'abr', 'aprile']],
  [5, ['may', 'mai', 'mayo', 'mei', 'maggio', 'mag']],
  [6, ['june', 'jun', 'juni', 'juin', 'junio', 'giugno', 'giu']],
  [7, ['july', 'jul', 'juli', 'juillet', 'juil', 'julio', 'luglio', 'lug']],
  [8, ['august', 'aug', 'août', 'aout', 'agosto', 'ago', 'augustus']],
  [9, ['september', 'sep', 'sept', 'septembre', 'septiembre', 'setiembre', 'settembre', 'set']],
  [10, ['october', 'oct', 'oktober', 'okt', 'octobre', 'octubre', 'ottobre', 'ott']],
  [11, ['november', 'nov', 'novembre', 'noviembre']],
  [12, ['december', 'dec', 'dezember', 'dez', 'décembre', 'decembre', 'déc', 'diciembre', 'dic', 'dicembre']],
]

const MONTH_BY_NAME = new Map<string, number>()
/** "März" also as "Marz", "février" as "fevrier": OCR and ASCII writers drop accents. */
const fold = (s: string): string => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '')
for (const [month, names] of MONTHS) {
  for (const name of names) {
    MONTH_BY_NAME.set(name, month)
    MONTH_BY_NAME.set(fold(name), month)
  }
}
const MONTH_SOURCE = [...MONTH_BY_NAME.keys()].sort((a, b) => b.length - a.length).join('|')

const B = String.raw`(?<![\p{L}\p{N}])`
const E = String.raw`(?![\p{L}\p{N}])`
const ISO_RE = new RegExp(`${B}(\\d{4})([-/.])(\\d{1,2})\\2(\\d{1,2})(?![\\p{N}]|[-/.]\\d)`, 'gu')
const NUMERIC_RE = new RegExp(`${B}(\\d{1,2})([-/.])(\\d{1,2})\\2(\\d{4}|\\d{2})(?![\\p{N}]|[-/.]\\d)`, 'gu')
// A month name may touch the year ("18 Apr2018": OCR of a narrow slip drops the space) and sit between slashes.
const DAY_MONTH_RE = new RegExp(
  `${B}(\\d{1,2})(?:st|nd|rd|th|er|e|º)?\\.?[\\s/-]*(?:of\\s+|de\\s+)?(${MONTH_SOURCE})(?![\\p{L}])\\.?,?[\\s/-]*(?:de\\s+)?(\\d{4}|'?\\d{2})${E}`,
  'giu',
)
/** Day, month and a full year run together ("30032018"), read in the document's order; only this century's. */
const COMPACT_RE = new RegExp(`${B}(\\d{2})(\\d{2})((?:19|20)\\d{2})${E}`, 'gu')
/** A date read from digits run together is a guess beside one written with separators. */
const COMPACT_QUALITY = 0.6
const MONTH_DAY_RE = new RegExp(
  `${B}(${MONTH_SOURCE})${E}\\.?[\\s-]*(\\d{1,2})(?:st|nd|rd|th)?,?[\\s-]+(\\d{4})${E}`,
  'giu',
)

/**
 * A written year in full. A two-digit year takes the century that puts it nearest the document's own four-digit
 * years (`reference`): "03/04/69" on an invoice dated 2069-04-10 is 2069, beside 1969 dates it is 1969. Without any,
 * the usual pivot: 00–69 → 20xx, 70–99 → 19xx.
 */
function fullYear(year: string, reference?: number): number {
  const y = Number.parseInt(year.replace("'", ''), 10)
  if (year.replace("'", '').length > 2) return y
  if (reference === undefined) return y < 70 ? 2000 + y : 1900 + y
  const candidates = [1900 + y, 2000 + y, 2100 + y]
  return candidates.reduce((best, c) => (Math.abs(c - reference) < Math.abs(best - reference) ? c : best))
}

/** The median of the document's four-digit years in dates, the reference for its two-digit ones. */
function referenceYear(text: string): number | undefined {
  const years: number[] = []
  for (const m of text.matchAll(ISO_RE)) years.push(Number(m[1]))
  for (const m of text.matchAll(NUMERIC_RE)) if ((m[4] as string).length === 4) years.push(Number(m[4]))
  for (const m of text.matchAll(DAY_MONTH_RE)) {
    const y = (m[3] as string).replace("'", '')
    if (y.length === 4) years.push(Number(y))
  }
  for (const m of text.matchAll(MONTH_DAY_RE)) years.push(Number(m[3]))
  const valid = years.filter((y) => y >= 1900 && y <= 2199).sort((a, b) => a - b)
  return valid.length ? valid[Math.floor(valid.length / 2)] : undefined
}

function isoDate(year: number, month: number, day: number): string | null {
  if (year < 1900 || year > 2199 || month < 1 || month > 12 || day < 1) return null
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (day > days) return null
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
}

/**
 * Every date in text, normalised to YYYY-MM-DD. Accepts 2024-03-05, 05/03/2024, 03/05/2024,
 * 05.03.2024, 5-Mar-24, 5 March 2024, 5th of March 2024, March 5, 2024 (and German, French,
 * Spanish, Dutch and Italian month names). A dotted numeric date is day.month.year; a slashed
 * or dashed one whose parts are both ≤ 12 is read in `order` (default day first) and marked
 * ambiguous (`guessed`: the order is an assumption, not read from the document).
 */
export function findDates(text: string, options: { order?: DateOrder; guessed?: boolean } = {}): FoundDate[] {
  const found: FoundDate[] = []
  const taken: Array<[number, number]> = []
  const reference = referenceYear(text)
  const add = (date: FoundDate): void => {
    const end = date.index + date.length
    if (taken.some(([s, e]) => date.index < e && end > s)) return
    taken.push([date.index, end])
    found.push(date)
  }
  for (const m of text.matchAll(ISO_RE)) {
    const value = isoDate(Number(m[1]), Number(m[3]), Number(m[4]))
    if (value) add({ value, index: m.index, length: m[0].length, quality: 1, ambiguous: false })
  }
  for (const m of text.matchAll(DAY_MONTH_RE)) {
    const month = MONTH_BY_NAME.get((m[2] as string).toLowerCase())
    const value = month ? isoDate(fullYear(m[3] as string, reference), month, Number(m[1])) : null
    if (value) add({ value, index: m.index, length: m[0].length, quality: 1, ambiguous: false })
  }
  for (const m of text.matchAll(MONTH_DAY_RE)) {
    const month = MONTH_BY_NAME.get((m[1] as string).toLowerCase())
    const value = month ? isoDate(Number(m[3]), month, Number(m[2])) : null
    if (value) add({ value, index: m.index, length: m[0].length, quality: 1, ambiguous: false })
  }
  for (const m of text.matchAll(NUMERIC_RE)) {
    const a = Number(m[1])
    const b = Number(m[3])
    const year = fullYear(m[4] as string, reference)
    const twoDigitYear = (m[4] as string).length === 2
    let order: DateOrder
    let ambiguous = false
    if (a > 12 && b <= 12) order = 'DMY'
    else if (b > 12 && a <= 12) order = 'MDY'
    else if (m[2] === '.') order = 'DMY'
    else {
      order = options.order ?? 'DMY'
      ambiguous = a !== b
    }
    const value = order === 'DMY' ? isoDate(year, b, a) : isoDate(year, a, b)
    if (!value) continue
    const quality = (ambiguous ? (options.order && !options.guessed ? 0.92 : 0.85) : 1) * (twoDigitYear ? 0.95 : 1)
    add({ value, index: m.index, length: m[0].length, quality, order, ambiguous })
  }
  for (const m of text.matchAll(COMPACT_RE)) {
    const [a, b] = [Number(m[1]), Number(m[2])]
    const order = options.order ?? 'DMY'
    const value = order === 'DMY' ? isoDate(Number(m[3]), b, a) : isoDate(Number(m[3]), a, b)
    if (value) add({ value, index: m.index, length: m[0].length, quality: COMPACT_QUALITY, order, ambiguous: false })
  }
  return found.sort((p, q) => p.index - q.index)
}

/**
 * The order the document writes numeric dates in, from its unambiguous ones (a first part > 12
 * means day first, a second part > 12 month first). Null when nothing tells.
 */
export function inferDateOrder(text: string): DateOrder | null {
  let dmy = 0
  let mdy = 0
  for (const m of text.matchAll(NUMERIC_RE)) {
    if (m[2] === '.') continue
    const a = Number(m[1])
    const b = Number(m[3])
    if (a > 12 && b <= 12) dmy++
    else if (b > 12 && a <= 12) mdy++
  }
  if (dmy === mdy) return null
  return dmy > mdy ? 'DMY' : 'MDY'
}

/** A single written date → YYYY-MM-DD, else null. */
export function normaliseDate(raw: string, options: { order?: DateOrder } = {}): string | null {
  return findDates(raw, options)[0]?.value ?? null
}
