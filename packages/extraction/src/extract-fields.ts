import { extractGeneric } from './extract-generic.ts'
import { findLineItems } from './extract-line-items.ts'
import type { DocumentInput, DocumentSource } from './document-source.ts'
import { documentDateOrder, extractInvoice, INVOICE_FIELDS, toSource, type InvoiceField } from './extract-invoice.ts'
import { bestCandidate, collectCandidates, type FieldSpec } from './field-candidates.ts'
import { toFieldValue } from './field-provenance.ts'
import { INVOICE_FIELD_SPECS, INVOICE_STOP_LABELS } from './invoice-labels.ts'
import { inferCurrency } from './normalise-currency.ts'
import { normaliseFieldValue, type DateReading } from './normalise-field-value.ts'
import {
  NOT_FOUND,
  type ExtractedData,
  type FieldDefinition,
  type FieldType,
  type FieldValue,
  type SchemaDefinition,
} from './schema.ts'
import { toTextDoc } from './text-lines.ts'

/** A field holding one value (not an item table). */
type ScalarField = FieldDefinition & { type: FieldType }
const isScalar = (f: FieldDefinition): f is ScalarField => f.type !== 'line_items'
const isInvoiceField = (name: string): name is InvoiceField => (INVOICE_FIELDS as readonly string[]).includes(name)
const ID_NAME = /(?:^|_)(?:number|no|nr|num|id|ref|reference|code)$/i
const conf = (n: number): number => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100

/** "invoice_number" → "invoice number", "dueDate" → "due Date". */
function humanise(name: string): string {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
}

/** How a declared field is read: its own labels, else its humanised name (plus the built-in synonyms for invoice field names). */
function specFor(field: ScalarField): FieldSpec {
  const builtin = isInvoiceField(field.name) ? INVOICE_FIELD_SPECS.find((s) => s.name === field.name) : undefined
  const own = (field.labels ?? []).map((text) => ({ text, weight: 0.92 }))
  const labels = own.length
    ? own
    : [{ text: humanise(field.name), weight: 0.85 }, ...(builtin && builtin.type === field.type ? builtin.labels : [])]
  return {
    name: field.name,
    type: field.type,
    labels,
    idLike: field.type === 'string' && (ID_NAME.test(field.name) || Boolean(builtin?.idLike)),
    preferLast: builtin?.preferLast,
  }
}

/** A value caught by a field's `pattern`, normalised to the field's type; null when it does not normalise. */
function fromPattern(source: DocumentSource, field: FieldDefinition, order: DateReading): FieldValue | null {
  const found = patternValue(source.text, field, order)
  if (!found) return null
  const where = toFieldValue({ ...found.at, value: 0, confidence: 0, currency: null, hit: null }, source)
  return { ...found.value, ...(where.page ? { page: where.page } : {}), ...(where.bbox ? { bbox: where.bbox } : {}) }
}

/** The value a field's pattern catches (first group, else the whole match), and where it was written. */
function patternValue(
  text: string,
  field: FieldDefinition,
  order: DateReading,
): { value: FieldValue; at: { index: number; length: number } } | null {
  if (!field.pattern) return null
  let re: RegExp
  try {
    re = new RegExp(field.pattern, 'im')
  } catch {
    return null
  }
  const m = re.exec(text)
  if (!m) return null
  const caught = m[1] ?? m[0]
  const raw = caught.trim()
  if (!raw) return null
  const at = { index: m.index + Math.max(0, m[0].indexOf(caught)) + caught.indexOf(raw), length: raw.length }
  const value = typedPatternValue(raw, field, order)
  return value ? { value, at } : null
}

function typedPatternValue(raw: string, field: FieldDefinition, order: DateReading): FieldValue | null {
  if (!isScalar(field)) return null
  const typed = normaliseFieldValue(raw, field.type, order)
  return typed ? { value: typed.value, confidence: conf(0.95 * typed.quality) } : null
}

/**
 * Extracts a schema's fields from a document's text: `{ field: { value, confidence } }` for every
 * declared field, `{ value: null, confidence: 0 }` when not found.
 * - A field's `pattern` (first capture group, or the whole match) wins when it matches and its
 *   value normalises to the field's type.
 * - Otherwise labels: the field's `labels` (case-insensitive, whole words, tolerant of ':' '#'
 *   'No.' and line breaks), the value on the label's line or on the line below.
 * - Built-in schemas: `invoice` uses the invoice extractor (extractInvoice), `generic` returns
 *   the document's key/value pairs (extractGeneric). A declared schema with `builtin` set gets
 *   those plus its own fields.
 * - A currency field that no label finds falls back to the currency the document uses.
 * Values: dates YYYY-MM-DD, amounts and numbers as JSON numbers, currencies ISO 4217 codes.
 */
export function extractFields(input: string | DocumentInput, schema: SchemaDefinition): ExtractedData {
  const source = toSource(input)
  const text = source.text
  const doc = toTextDoc(text, source.xRange)
  const docCurrency = inferCurrency(doc.text)
  const order = documentDateOrder(doc.text, docCurrency?.code)
  const result: ExtractedData = schema.builtin === 'generic' ? extractGeneric(text) : {}

  const viaInvoice = schema.builtin === 'invoice'
  let invoice: ReturnType<typeof extractInvoice> | undefined
  if (viaInvoice) {
    const builtinLabels = new Map(
      INVOICE_FIELD_SPECS.map((s) => [s.name, new Set(s.labels.map((l) => l.text.toLowerCase()))]),
    )
    const extraLabels: Partial<Record<InvoiceField, string[]>> = {}
    for (const field of schema.fields) {
      if (!isInvoiceField(field.name)) continue
      const extra = (field.labels ?? []).filter((l) => !builtinLabels.get(field.name)?.has(l.toLowerCase()))
      if (extra.length) extraLabels[field.name] = extra
    }
    invoice = extractInvoice(input, { extraLabels })
    if (schema.fields.length === 0) Object.assign(result, invoice)
  }

  const byLabel = schema.fields.filter(isScalar).filter((f) => !(invoice && isInvoiceField(f.name)))
  const specs = byLabel.map(specFor)
  const { candidates } = collectCandidates(
    { doc, dateOrder: order.order, dateOrderGuessed: order.guessed },
    specs,
    INVOICE_STOP_LABELS,
  )

  for (const field of schema.fields) {
    if (field.type === 'line_items') {
      // The item table: the invoice extractor's rows (checked against its totals), else read on their own.
      result[field.name] = invoice?.line_items ?? findLineItems(source, doc)
      continue
    }
    const patterned = fromPattern(source, field, order)
    if (patterned) {
      result[field.name] = patterned
      continue
    }
    if (invoice && isInvoiceField(field.name)) {
      result[field.name] = invoice[field.name]
      continue
    }
    const spec = specs.find((s) => s.name === field.name)!
    const best = bestCandidate(candidates.get(field.name) ?? [], spec.preferLast)
    if (best) {
      result[field.name] = toFieldValue(best, source)
    } else if (field.type === 'currency' && docCurrency) {
      result[field.name] = { value: docCurrency.code, confidence: conf(docCurrency.confidence * 0.9) }
    } else {
      result[field.name] = { ...NOT_FOUND }
    }
  }
  return result
}
