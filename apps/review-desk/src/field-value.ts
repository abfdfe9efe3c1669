import type { FieldValue } from './api-client.ts'

/** How a field is edited: its schema type as its value and name show it (the built-in invoice schema's types). */
export type FieldKind = 'date' | 'amount' | 'currency' | 'text'

const DATE = /^\d{4}-\d{2}-\d{2}$/

export function fieldKind(name: string, field: FieldValue): FieldKind {
  if (typeof field.value === 'number' || /amount|total|tax|price|quantity/.test(name)) return 'amount'
  if (name === 'currency') return 'currency'
  if ((typeof field.value === 'string' && DATE.test(field.value)) || /date/.test(name)) return 'date'
  return 'text'
}

/** The typed text as the API takes it (amounts as numbers, currency codes upper case); null when left empty. */
export function parseInput(kind: FieldKind, text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  const t = text.trim()
  if (t === '') return { ok: true, value: null }
  if (kind === 'amount') {
    const n = Number(t.replace(/\s/g, ''))
    return Number.isFinite(n) ? { ok: true, value: n } : { ok: false, why: 'an amount is a number, e.g. 1234.50' }
  }
  if (kind === 'currency') {
    const c = t.toUpperCase()
    return /^[A-Z]{3}$/.test(c) ? { ok: true, value: c } : { ok: false, why: 'a currency is a 3-letter code, e.g. EUR' }
  }
  if (kind === 'date') return DATE.test(t) ? { ok: true, value: t } : { ok: false, why: 'a date reads YYYY-MM-DD' }
  return { ok: true, value: t }
}

export const shown = (v: unknown): string => (v === null || v === undefined ? '' : String(v))

/** Confidence bands for colour: the bar most pipelines set, and half of it. */
export const confidenceBand = (c: number): 'high' | 'medium' | 'low' =>
  c >= 0.9 ? 'high' : c >= 0.5 ? 'medium' : 'low'

export const isFieldValue = (v: unknown): v is FieldValue =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && 'value' in v && 'confidence' in v
