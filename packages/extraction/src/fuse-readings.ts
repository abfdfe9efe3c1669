import type { FieldValue } from './schema.ts'

/**
 * Two OCR engines read the same scan with different mistakes (one misreads faded digits, the other a date's
 * separators), so a field read alike from both readings is far surer than either alone, and where they differ the
 * surer reading wins but loses some confidence. Measured on real receipts: fusing tesseract's and PaddleOCR's
 * readings field by field got more dates and totals right than either engine did (see the extraction README).
 */

/** Both readings found the same value: at least this sure. */
const AGREED = 0.9
/** The readings differ (or one found nothing): the surer one keeps this share of its confidence. */
const DISAGREED = 0.85

const isField = (v: unknown): v is FieldValue =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && 'value' in v && 'confidence' in v

function fuseField(a: FieldValue, b: FieldValue): FieldValue {
  if (a.value !== null && b.value !== null && String(a.value) === String(b.value)) {
    const surer = a.confidence >= b.confidence ? a : b
    return { ...surer, confidence: Math.max(a.confidence, b.confidence, AGREED) }
  }
  if (a.value === null && b.value === null) return a
  const surer = a.confidence >= b.confidence ? a : b
  return { ...surer, confidence: surer.confidence * DISAGREED }
}

type Row = Record<string, unknown>
const cellNumber = (row: Row, cell: string): number | null => {
  const v = row[cell]
  return isField(v) && typeof v.value === 'number' ? v.value : null
}
const same = (a: number, b: number): boolean => Math.abs(a - b) <= 0.011

/**
 * How well a table of rows holds together: each row with an amount counts, a row whose quantity × unit price makes
 * its amount counts again, and amounts that add up to one of `totals` count once more per row.
 */
function tableScore(rows: readonly Row[], totals: readonly number[]): number {
  let score = 0
  let sum = 0
  for (const row of rows) {
    const amount = cellNumber(row, 'amount')
    const quantity = cellNumber(row, 'quantity')
    const price = cellNumber(row, 'unit_price')
    if (amount === null) continue
    sum += amount
    score += 1
    if (quantity !== null && price !== null && same(quantity * price, amount)) score += 1
  }
  return totals.some((t) => same(t, sum)) ? score + rows.length : score
}

/**
 * Fuses the fields extracted from a page's two readings, field by field. A table (line items) is taken whole from
 * the reading whose rows hold together better against the fused totals (tableScore), the first reading's on a tie.
 */
export function fuseReadings<T extends Record<string, unknown>>(primary: T, second: T): T {
  const fused: Record<string, unknown> = { ...primary }
  for (const [name, value] of Object.entries(primary)) {
    const other = second[name]
    if (isField(value) && isField(other)) fused[name] = fuseField(value, other)
  }
  const totals = ['amount', 'amount_untaxed'].flatMap((name) => {
    const v = fused[name]
    return isField(v) && typeof v.value === 'number' ? [v.value] : []
  })
  for (const [name, value] of Object.entries(primary)) {
    const other = second[name]
    if (!Array.isArray(value) || !Array.isArray(other)) continue
    if (tableScore(other as Row[], totals) > tableScore(value as Row[], totals)) fused[name] = other
  }
  return fused as T
}
