import type { DocumentSource } from './document-source.ts'
import type { Candidate } from './field-candidates.ts'
import { NOT_FOUND, type FieldValue } from './schema.ts'

/**
 * How much an OCR'd value's confidence keeps when the OCR engine itself was unsure: a value read
 * from words tesseract scored 0 keeps this share, one it scored 1 keeps all of it.
 */
export const OCR_CONFIDENCE_FLOOR = 0.6

const clamp01 = (n: number): number => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100

/**
 * A candidate as a field value: its confidence (lowered by the OCR engine's own doubt about the
 * words it came from) and where it was read. A derived value (no written length) carries no box.
 */
export function toFieldValue(c: Candidate | undefined | null, source: DocumentSource): FieldValue {
  if (!c) return { ...NOT_FOUND }
  if (c.length === undefined) return { value: c.value, confidence: clamp01(c.confidence) }
  const where = source.locate(c.index, c.index + c.length)
  const ocrFactor = where.ocrConf === undefined ? 1 : OCR_CONFIDENCE_FLOOR + (1 - OCR_CONFIDENCE_FLOOR) * where.ocrConf
  return {
    value: c.value,
    confidence: clamp01(c.confidence * ocrFactor),
    ...(where.page !== undefined ? { page: where.page } : {}),
    ...(where.bbox ? { bbox: where.bbox } : {}),
  }
}
