/** Active ISO 4217 codes. */
export const ISO_4217_CODES: ReadonlySet<string> = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD ' +
    'CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD ' +
    'GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT ' +
    'LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR ' +
    'NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD ' +
    'SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD ' +
    'XOF XPF YER ZAR ZMW ZWL'
  ).split(' '),
)

/** Codes common enough to be trusted when they stand alone in text (not next to an amount). */
const COMMON_CODES: ReadonlySet<string> = new Set(
  (
    'USD EUR GBP JPY CHF CAD AUD NZD CNY HKD SGD SEK NOK DKK PLN CZK HUF RON BGN INR BRL MXN ZAR RUB ' +
    'ILS KRW AED SAR THB IDR MYR PHP VND TWD ARS CLP COP NGN KES EGP UAH ISK QAR KWD'
  ).split(' '),
)

/** Currency symbols and marks, longest first where one is a prefix of another. */
const SYMBOLS: ReadonlyArray<[string, string]> = [
  ['US$', 'USD'],
  ['USD$', 'USD'],
  ['AU$', 'AUD'],
  ['A$', 'AUD'],
  ['CA$', 'CAD'],
  ['C$', 'CAD'],
  ['NZ$', 'NZD'],
  ['HK$', 'HKD'],
  ['SG$', 'SGD'],
  ['S$', 'SGD'],
  ['R$', 'BRL'],
  ['MX$', 'MXN'],
  ['NT$', 'TWD'],
  ['CN¥', 'CNY'],
  ['RMB', 'CNY'],
  ['€', 'EUR'],
  ['£', 'GBP'],
  ['¥', 'JPY'],
  ['₹', 'INR'],
  ['₩', 'KRW'],
  ['₽', 'RUB'],
  ['₺', 'TRY'],
  ['₪', 'ILS'],
  ['₫', 'VND'],
  ['₱', 'PHP'],
  ['฿', 'THB'],
  ['₴', 'UAH'],
  ['₦', 'NGN'],
  ['zł', 'PLN'],
  ['Kč', 'CZK'],
  ['$', 'USD'],
]

/** Local abbreviations written with letters; they count only as whole words. */
const LOCAL_MARKS: ReadonlyArray<[RegExp, string]> = [
  [/(?<![A-Za-z])Rs\.?(?![A-Za-z])/, 'INR'],
  [/(?<![A-Za-z])RM(?![A-Za-z])/, 'MYR'],
  [/(?<![A-Za-z])zl(?![A-Za-z])/, 'PLN'],
  [/(?<![A-Za-z])Kc(?![A-Za-z])/, 'CZK'],
]
/** The same marks as amount prefixes ("Rs. 1,200", "RM 12.50"). */
export const LOCAL_MARK_PREFIX_SOURCE = 'Rs\\.?|RM'

/** Currency names (lowercase, singular and plural). */
const NAMES: ReadonlyArray<[RegExp, string, 'ambiguous'?]> = [
  [/\b(?:us|u\.s\.|united states|american) dollars?\b/i, 'USD'],
  [/\bcanadian dollars?\b/i, 'CAD'],
  [/\baustralian dollars?\b/i, 'AUD'],
  [/\bnew zealand dollars?\b/i, 'NZD'],
  [/\bhong kong dollars?\b/i, 'HKD'],
  [/\bsingapore dollars?\b/i, 'SGD'],
  [/\bdollars?\b/i, 'USD'],
  [/\beuros?\b/i, 'EUR'],
  [/\b(?:pounds? sterling|sterling|british pounds?|gbp pounds?)\b/i, 'GBP'],
  [/\bpounds?\b/i, 'GBP', 'ambiguous'],
  [/\b(?:japanese )?yen\b/i, 'JPY'],
  [/\bswiss francs?\b/i, 'CHF'],
  [/\b(?:chinese )?(?:yuan|renminbi)\b/i, 'CNY'],
  [/\bindian rupees?\b/i, 'INR'],
  [/\brupees?\b/i, 'INR'],
  [/\bswedish kron(?:a|or)\b/i, 'SEK'],
  [/\bnorwegian kron(?:e|er)\b/i, 'NOK'],
  [/\bdanish kron(?:e|er)\b/i, 'DKK'],
  [/\bzlotys?\b|\bzłoty\b/i, 'PLN'],
  [/\brand\b/i, 'ZAR', 'ambiguous'],
  [/\breais\b|\breal brasileiro\b/i, 'BRL'],
  [/\bmexican pesos?\b/i, 'MXN'],
  [/\broubles?\b|\brubles?\b/i, 'RUB'],
  [/\bfrancs?\b/i, 'CHF', 'ambiguous'],
]

/**
 * A currency written as an ISO code, a symbol or a name → its ISO 4217 code, else null.
 * `$` alone is USD (prefixed dollars such as `A$`, `C$`, `HK$` map to their own codes).
 */
export function normaliseCurrency(raw: string): string | null {
  const text = raw.trim()
  if (!text) return null
  const code = /(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])/.exec(text)?.[1]
  if (code && ISO_4217_CODES.has(code)) return code
  const upper = text.toUpperCase()
  if (upper.length === 3 && ISO_4217_CODES.has(upper)) return upper
  for (const [symbol, iso] of SYMBOLS) if (text.includes(symbol)) return iso
  for (const [pattern, iso] of LOCAL_MARKS) if (pattern.test(text)) return iso
  for (const [pattern, iso] of NAMES) if (pattern.test(text)) return iso
  if (/\bfr\.?(?=\s|\d|$)/i.test(text)) return 'CHF'
  return null
}

/** Symbols regex source (for amount scanning), longest first. */
export const CURRENCY_SYMBOL_SOURCE = SYMBOLS.map(([s]) => s.replace(/[$.*+?^(){}|[\]\\]/g, '\\$&'))
  .sort((a, b) => b.length - a.length)
  .join('|')

export type CurrencyMention = { code: string; index: number; length: number; weight: number }

/** Every currency mention in text: codes, symbols and names, weighted by how telling they are. */
export function findCurrencyMentions(text: string): CurrencyMention[] {
  const mentions: CurrencyMention[] = []
  for (const m of text.matchAll(/(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])/g)) {
    const code = m[1] as string
    if (!ISO_4217_CODES.has(code)) continue
    const nearAmount =
      /^\s?[-−(]?\d/.test(text.slice(m.index + 3, m.index + 6)) ||
      /\d[\s)]?$/.test(text.slice(Math.max(0, m.index - 3), m.index))
    if (!nearAmount && !COMMON_CODES.has(code)) continue
    mentions.push({ code, index: m.index, length: 3, weight: nearAmount ? 3 : 1.5 })
  }
  const symbolRe = new RegExp(CURRENCY_SYMBOL_SOURCE, 'g')
  for (const m of text.matchAll(symbolRe)) {
    const symbol = m[0]
    if (symbol === 'RMB' && !/\d/.test(text.slice(m.index, m.index + 8))) continue
    const iso = SYMBOLS.find(([s]) => s === symbol)?.[1]
    if (!iso) continue
    const nearAmount =
      /^\s?\d/.test(text.slice(m.index + symbol.length, m.index + symbol.length + 2)) ||
      /\d\s?$/.test(text.slice(Math.max(0, m.index - 2), m.index))
    mentions.push({
      code: iso,
      index: m.index,
      length: symbol.length,
      weight: (nearAmount ? 3 : 1) * (symbol === '$' ? 0.9 : 1),
    })
  }
  for (const [pattern, iso] of LOCAL_MARKS) {
    for (const m of text.matchAll(new RegExp(pattern.source, 'g'))) {
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 2)
      const before = text.slice(Math.max(0, m.index - 2), m.index)
      // Letters alone ("RM", "Rs") are too common to count unless they sit on an amount.
      if (!/^\s?\d/.test(after) && !/\d\s?$/.test(before)) continue
      mentions.push({ code: iso, index: m.index, length: m[0].length, weight: 3 })
    }
  }
  const covered: Array<[number, number]> = []
  for (const [pattern, iso, ambiguous] of NAMES) {
    if (ambiguous) continue
    const re = new RegExp(pattern.source, 'gi')
    for (const m of text.matchAll(re)) {
      const end = m.index + m[0].length
      if (covered.some(([s, e]) => m.index < e && end > s)) continue
      covered.push([m.index, end])
      mentions.push({ code: iso, index: m.index, length: m[0].length, weight: 1 })
    }
  }
  return mentions.sort((a, b) => a.index - b.index)
}

/** Hints that a bare "$" is not the US dollar. */
const DOLLAR_REGIONS: ReadonlyArray<[RegExp, string]> = [
  [/\bABN\b|\bPty\.?\s+Ltd\b|\bAustralia\b|\b(?:NSW|QLD|VIC)\s+\d{4}\b/, 'AUD'],
  [/\bNew Zealand\b|\bNZBN\b|\bIRD\b/, 'NZD'],
  [/\bGST\/HST\b|\bHST\b|\bQST\b|\bCanada\b|\b(?:ON|QC|BC|AB)\s+[A-Z]\d[A-Z]\s?\d[A-Z]\d\b/, 'CAD'],
  [/\bSingapore\b|\bUEN\b/, 'SGD'],
  [/\bHong Kong\b/, 'HKD'],
  [/\bM[ée]xico\b|\bRFC\b/, 'MXN'],
]

/** Traces of the issuer's country (names, legal forms, tax ids), for a document that writes no currency. */
const COUNTRY_CURRENCIES: ReadonlyArray<[RegExp, string]> = [
  [
    /\b(?:India|GSTIN|CGST|SGST|IGST|Pvt\.?\s+Ltd|Mumbai|New Delhi|Bengaluru|Bangalore|Chennai|Kolkata|Hyderabad|Pune)\b/,
    'INR',
  ],
  [/\b(?:Malaysia|Sdn\.?\s+Bhd|Kuala Lumpur|Selangor|Penang|Jalan)\b/, 'MYR'],
  [/\b(?:Singapore|Pte\.?\s+Ltd|UEN)\b/, 'SGD'],
  [/\b(?:Hong Kong|Kowloon)\b/, 'HKD'],
  [/\b(?:Polska|Poland|Warszawa|Krak[oó]w|NIP)\b|Sp\.\s?z\s?o\.o\./, 'PLN'],
  [/\b(?:Schweiz|Suisse|Switzerland|Z[uü]rich|Gen[eè]ve)\b/, 'CHF'],
  [/\b(?:United Kingdom|England|Scotland|London|Manchester)\b|\b[A-Z]{1,2}\d{1,2}[A-Z]?\s\d[A-Z]{2}\b/, 'GBP'],
  [
    /\b(?:Deutschland|Germany|GmbH|USt-?IdNr|France|SARL|SIRET|Nederland|Netherlands|KvK|España|Spain|Italia|Italy|Österreich|Austria|Belgi(?:um|que|ë)|Ireland|Portugal|Paris|Lyon|Marseille|Toulouse|Bordeaux|Lille|Nantes|Berlin|München|Hamburg|Köln|Frankfurt|Amsterdam|Rotterdam|Utrecht|Madrid|Barcelona|Valencia|Sevilla|Milano|Roma|Torino|Firenze|Napoli|rue|MwSt|USt|TVA|BTW|IVA|Stra(?:ß|ss)e|Calle|Via|Corso|Piazza)\b|\bB\.V\.|\bS\.r\.l\.|\bS\.L\.|\bP\.\s?IVA\b/,
    'EUR',
  ],
  [/\b(?:Australia|ABN)\b|\bPty\.?\s+Ltd\b/, 'AUD'],
  [/\b(?:Canada|Ontario|Qu[eé]bec)\b/, 'CAD'],
  [/\b(?:USA|United States|U\.S\.A\.)\b|\b[A-Z]{2}\s\d{5}(?:-\d{4})?\b/, 'USD'],
]
/** Confidence of a currency known only from the issuer's country. */
const FROM_COUNTRY = 0.5

/** The currency of the country a document comes from, judged by the first trace found. */
export function currencyFromCountry(text: string): { code: string; index: number; length: number } | null {
  let best: { code: string; index: number; length: number } | null = null
  for (const [pattern, code] of COUNTRY_CURRENCIES) {
    const m = pattern.exec(text)
    if (m && (!best || m.index < best.index)) best = { code, index: m.index, length: m[0].length }
  }
  return best
}

export type InferredCurrency = { code: string; confidence: number; index?: number; length?: number }

/**
 * The document's currency from every mention anywhere in the text, else from its country, or null.
 * Confidence grows with how many and how telling the mentions are, and drops when they disagree.
 */
export function inferCurrency(text: string): InferredCurrency | null {
  const totals = new Map<string, number>()
  const mentions = findCurrencyMentions(text)
  for (const mention of mentions) totals.set(mention.code, (totals.get(mention.code) ?? 0) + mention.weight)
  if (mentions.length === 0) {
    const country = currencyFromCountry(text)
    return country ? { ...country, confidence: FROM_COUNTRY } : null
  }
  let best: string | null = null
  let bestWeight = 0
  let all = 0
  for (const [code, weight] of totals) {
    all += weight
    if (weight > bestWeight) {
      best = code
      bestWeight = weight
    }
  }
  if (!best) return null
  if (best === 'USD' && !/\bUSD\b|US\$|U\.S\.|\bUS dollars?\b/i.test(text)) {
    // A bare "$": other dollar countries leave traces (ABN, Pty Ltd, GST/HST, ...).
    const region = DOLLAR_REGIONS.find(([pattern]) => pattern.test(text))
    if (region) best = region[1]
  }
  const strength = Math.min(1, bestWeight / 6)
  const agreement = bestWeight / all
  const confidence = (0.5 + 0.35 * strength) * (0.6 + 0.4 * agreement)
  const first = mentions.find((m) => m.code === best)
  return { code: best, confidence: Math.round(confidence * 100) / 100, index: first?.index, length: first?.length }
}
