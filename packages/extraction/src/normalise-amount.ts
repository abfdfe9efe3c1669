import {
  CURRENCY_SYMBOL_SOURCE,
  ISO_4217_CODES,
  LOCAL_MARK_PREFIX_SOURCE,
  normaliseCurrency,
} from './normalise-currency.ts'

export type FoundAmount = {
  value: number
  /** ISO code written next to the number, if any. */
  currency: string | null
  index: number
  length: number
  /** 1 for a well-formed money amount (decimals or a currency), lower for a bare integer. */
  quality: number
}

const NUMBER_SOURCE =
  // 1,234.56 / 1.234,56 / 1'234.56 / 1 234,56 (space groups need a decimal comma) / 1234.5 / 1234
  String.raw`\d{1,3}(?:[,.'’\u202f]\d{3})+(?:[.,]\d{1,2})?` +
  String.raw`|\d{1,3}(?: \d{3})+,\d{1,2}` +
  String.raw`|\d+(?:[.,]\d{1,2})?`

const PREFIX_SOURCE = `(?:${CURRENCY_SYMBOL_SOURCE}|${LOCAL_MARK_PREFIX_SOURCE}|[A-Z]{3}(?=\\s?\\d))`
const SUFFIX_SOURCE = `(?:${CURRENCY_SYMBOL_SOURCE}|zł|zl|Kč|kr\\.?|Ft|[A-Z]{3}(?![A-Za-z]))`

const AMOUNT_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_.,/:+#-])` +
    String.raw`(?<sign>[-−–]\s?)?(?<open>\()?` +
    `(?:(?<pre>${PREFIX_SOURCE})\\s?)?` +
    String.raw`(?<sign2>[-−])?` +
    `(?<num>${NUMBER_SOURCE})` +
    String.raw`(?<trail>-)?` +
    `(?:\\s?(?<post>${SUFFIX_SOURCE}))?` +
    String.raw`(?<close>\))?` +
    String.raw`(?![\p{L}\p{N}]|[.,/:]\d|\s?%|-\d)`,
  'gu',
)

/**
 * A written number → a JS number. Decides the decimal separator: with both `.` and `,` the
 * later one; with one of them once and followed by exactly 3 digits, a thousands separator
 * (1,234 and 1.234 are 1234; 0,125 is 0.125); otherwise a decimal point.
 */
export function parseNumber(written: string): number | null {
  let s = written.replace(/[\s\u00a0\u202f'’]/g, '')
  if (!/^\d[\d.,]*$/.test(s)) return null
  const lastComma = s.lastIndexOf(',')
  const lastDot = s.lastIndexOf('.')
  if (lastComma >= 0 && lastDot >= 0) {
    const decimal = lastComma > lastDot ? ',' : '.'
    const group = decimal === ',' ? '.' : ','
    s = s.split(group).join('')
    if (s.split(decimal).length > 2) return null
    s = s.replace(decimal, '.')
  } else if (lastComma >= 0 || lastDot >= 0) {
    const sep = lastComma >= 0 ? ',' : '.'
    const parts = s.split(sep)
    const last = parts[parts.length - 1] ?? ''
    const isGrouping = parts.length > 2 || (last.length === 3 && parts[0] !== '0')
    s = isGrouping ? parts.join('') : `${parts[0]}.${last}`
  }
  const value = Number(s)
  return Number.isFinite(value) ? value : null
}

/** Every money-like number in text, in order. Dates, times, percentages and IDs (INV-12) are skipped. */
export function findAmounts(text: string): FoundAmount[] {
  const found: FoundAmount[] = []
  for (const m of text.matchAll(AMOUNT_RE)) {
    const g = m.groups ?? {}
    const num = g.num ?? ''
    let value = parseNumber(num)
    if (value === null) continue
    const pre = g.pre && (!/^[A-Z]{3}$/.test(g.pre) || ISO_4217_CODES.has(g.pre)) ? g.pre : undefined
    const post = g.post && (!/^[A-Z]{3}$/.test(g.post) || ISO_4217_CODES.has(g.post)) ? g.post : undefined
    if (g.pre && !pre) continue
    const negative = Boolean(g.sign || g.sign2 || g.trail || (g.open && g.close))
    if (negative) value = -value
    const currency = pre || post ? normaliseCurrency(pre ?? post ?? '') : null
    const hasDecimals = /[.,]\d{1,2}$/.test(num)
    const quality = currency || hasDecimals ? 1 : num.length > 9 ? 0.4 : 0.8
    let length = m[0].length
    if (g.post && !post) length -= m[0].length - m[0].lastIndexOf(g.post)
    found.push({ value: Math.round(value * 1e6) / 1e6, currency, index: m.index, length, quality })
  }
  return found
}

/** A single written amount (`$1,234.56`, `1.234,56 €`, `EUR 99.50`) → a number, else null. */
export function normaliseAmount(raw: string): number | null {
  return findAmounts(raw.trim())[0]?.value ?? null
}
