import { findAmounts, parseNumber } from './normalise-amount.ts'
import { normaliseCurrency } from './normalise-currency.ts'
import { findDates, type DateOrder } from './normalise-date.ts'
import type { FieldType } from './schema.ts'

/** How to read an ambiguous numeric date: the document's order, and whether that order was only a guess. */
export type DateReading = { order?: DateOrder; guessed?: boolean }

/**
 * One written value as a field of `type` reports it (DESIGN, Extraction): dates `YYYY-MM-DD`, amounts and numbers
 * JSON numbers (a leading minus or an opening parenthesis makes them negative), currencies ISO 4217 codes, strings
 * as written. Null when the type cannot hold the value. `quality` is below 1 only for a date whose day and month
 * could be swapped. Extraction uses it for what a field's pattern catches, review for a reviewer's corrections.
 */
export function normaliseFieldValue(
  raw: string,
  type: FieldType,
  dates: DateReading = {},
): { value: string | number; quality: number } | null {
  switch (type) {
    case 'string':
      return { value: raw, quality: 1 }
    case 'date': {
      const date = findDates(raw, dates)[0]
      return date ? { value: date.value, quality: date.quality } : null
    }
    case 'amount':
    case 'number': {
      const amount = findAmounts(raw)[0]?.value ?? parseNumber(raw.replace(/[^\d.,]/g, ''))
      if (amount === null || amount === undefined) return null
      return { value: /^\s*[-−(]/.test(raw) && amount > 0 ? -amount : amount, quality: 1 }
    }
    case 'currency': {
      const code = normaliseCurrency(raw)
      return code ? { value: code, quality: 1 } : null
    }
  }
}
