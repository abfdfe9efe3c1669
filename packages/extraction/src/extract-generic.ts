import { findAmounts } from './normalise-amount.ts'
import { normaliseCurrency } from './normalise-currency.ts'
import { findDates, inferDateOrder } from './normalise-date.ts'
import type { ExtractedFields, FieldValue } from './schema.ts'
import { toTextDoc } from './text-lines.ts'

const MAX_PAIRS = 200
const COLON = /[ \t]*:(?!\/\/)[ \t]*/g
/** Words that usually start a two- or three-word key ("Due Date", "Invoice No", "Total Due"). */
const KEY_MODIFIERS = new Set(
  (
    'due invoice order tax total net account customer client payment issue delivery ship shipping bill billing vat po ' +
    'reference ref amount sub grand balance start end purchase document doc unit item contact phone e email tracking ' +
    'service period sales vendor supplier bank routing sort swift iban registration company trading legal'
  ).split(' '),
)
const ID_KEY =
  /(?:^|_)(?:no|nr|number|num|id|ref|reference|code|phone|tel|telephone|fax|mobile|zip|postcode|postal_code|account|iban|bic|swift|sort_code|vat_no|vat_number|vat_id|tax_id|ein|abn|po)(?:_|$)/

/** "Invoice #" → "invoice_number", "Due Date" → "due_date", "Kunden-Nr." → "kunden_nr". */
export function toSnakeCase(key: string): string {
  const withoutNotes = key.replace(/\s*\([^)]*\)\s*/g, ' ').trim()
  const snake = (withoutNotes || key)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/#/g, ' number ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
  return /^\d/.test(snake) ? `field_${snake}` : snake
}

function typedValue(key: string, raw: string, order: ReturnType<typeof inferDateOrder>): FieldValue {
  const value = raw.trim().replace(/[;,]$/, '')
  if (/currency|währung|devise|moneda/i.test(key)) {
    const code = normaliseCurrency(value)
    if (code) return { value: code, confidence: 0.85 }
  }
  const date = findDates(value, { order: order ?? undefined, guessed: !order })[0]
  if (date && date.length >= value.length * 0.8)
    return { value: date.value, confidence: Math.round(0.85 * date.quality * 100) / 100 }
  if (!ID_KEY.test(key)) {
    const amounts = findAmounts(value)
    const only = amounts.length === 1 ? amounts[0] : undefined
    if (
      only &&
      only.length >= value.length - 1 &&
      !/^0\d/.test(value) &&
      (only.quality === 1 || /^[1-9]\d{0,11}$/.test(value))
    ) {
      return { value: only.value, confidence: 0.85 }
    }
  }
  return { value, confidence: 0.8 }
}

/**
 * Every "Key: value" pair in the text (several per line when separated by wide gaps or when the
 * next key is capitalised; a key alone on its line takes the next line as its value). Keys are
 * snake_case; values are normalised when they are plainly a date (YYYY-MM-DD), an amount
 * (number) or, for currency keys, a currency (ISO code); otherwise the text. A repeated key gets
 * a `_2`, `_3`... suffix.
 */
export function extractGeneric(text: string): ExtractedFields {
  const doc = toTextDoc(text)
  const order = inferDateOrder(doc.text)
  const out: ExtractedFields = {}
  let count = 0
  const add = (rawKey: string, rawValue: string, fromNextLine: boolean): void => {
    const key = toSnakeCase(rawKey)
    if (!key || count >= MAX_PAIRS || /^(?:https?|mailto|ftp|www)$/.test(key)) return
    if (rawKey.trim().split(/\s+/).length > 6) return
    const value = rawValue.trim()
    if (!value || !/[\p{L}\p{N}]/u.test(value)) return
    const typed = typedValue(key, value, order)
    if (fromNextLine) typed.confidence = Math.round(typed.confidence * 0.85 * 100) / 100
    let name = key
    for (let n = 2; name in out; n++) name = `${key}_${n}`
    out[name] = typed
    count++
  }

  doc.lines.forEach((line, lineIndex) => {
    for (const cell of line.cells) {
      const pairs = keyValuePairs(cell.text)
      pairs.forEach((pair, i) => {
        if (pair.value.trim()) {
          add(pair.key, pair.value, false)
        } else if (i === pairs.length - 1 && line.cells.length === 1) {
          const below = doc.lines[lineIndex + 1]
          if (below && below.cells.length === 1 && !below.cells[0]!.text.includes(':'))
            add(pair.key, below.cells[0]!.text, true)
        }
      })
    }
  })
  return out
}

/** Splits "Key: value Other Key: value" into pairs; the first key must open the cell. */
function keyValuePairs(cell: string): Array<{ key: string; value: string }> {
  const colons = [...cell.matchAll(COLON)].filter((m) => {
    const before = cell[m.index - 1] ?? ''
    const after = cell[m.index + m[0].length] ?? ''
    return m.index > 0 && /[\p{L}\p{N}#.)]/u.test(before) && !(/\d/.test(before) && /\d/.test(after) && m[0] === ':')
  })
  if (colons.length === 0) return []
  const first = colons[0]!
  const firstKey = cell.slice(0, first.index).trim()
  if (!/^\p{L}/u.test(firstKey) || firstKey.split(/\s+/).length > 6) return []
  const pairs: Array<{ key: string; keyStart: number; valueStart: number }> = [
    { key: firstKey, keyStart: 0, valueStart: first.index + first[0].length },
  ]
  for (const colon of colons.slice(1)) {
    const previous = pairs[pairs.length - 1]!
    const before = cell.slice(previous.valueStart, colon.index)
    const words = before.split(/\s+/).filter(Boolean)
    if (words.length < 2) continue
    let take = 1
    while (
      take < 3 &&
      take < words.length - 1 &&
      KEY_MODIFIERS.has((words[words.length - take - 1] ?? '').toLowerCase().replace(/[^a-z]/g, ''))
    )
      take++
    const keyWords = words.slice(-take)
    const key = keyWords.join(' ')
    if (!/^\p{Lu}/u.test(key) || !/^[\p{L}][\p{L}\p{N} .#&/()'’-]*$/u.test(key)) continue
    const keyStart = before.lastIndexOf(keyWords[0]!) + previous.valueStart
    pairs.push({ key, keyStart, valueStart: colon.index + colon[0].length })
  }
  return pairs.map((pair, i) => ({
    key: pair.key,
    value: cell.slice(pair.valueStart, pairs[i + 1]?.keyStart ?? cell.length),
  }))
}
