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

/**
 * Fuses the fields extracted from a page's two readings, field by field. Fields that are not single values (line
 * items) come from the first reading, the primary one.
 */
export function fuseReadings<T extends Record<string, unknown>>(primary: T, second: T): T {
  const fused: Record<string, unknown> = { ...primary }
  for (const [name, value] of Object.entries(primary)) {
    const other = second[name]
    if (isField(value) && isField(other)) fused[name] = fuseField(value, other)
  }
  return fused as T
}
