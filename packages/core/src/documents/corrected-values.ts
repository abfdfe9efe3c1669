import { DomainError, type PipelineDefinition } from '@quire/domain'
import { type FieldType, normaliseFieldValue, resolveSchema } from '@quire/extraction'

export type FieldValue = { value: string | number | null; confidence: number }
export type LineItemValue = Record<(typeof LINE_ITEM_CELLS)[number], FieldValue>

/** One corrected cell or value as a reviewer sends it (already unwrapped from `{value}` at the edge). */
export type CorrectedValue = string | number | null
/** A reviewer's correction of one field: a value, or for a `line_items` field the whole table as rows of cells. */
export type Correction = CorrectedValue | ReadonlyArray<Readonly<Record<string, CorrectedValue>>>

/** The cells of an item row and how each is read (DESIGN, Extraction: `line_items`). */
const LINE_ITEM_CELLS = ['description', 'quantity', 'unit_price', 'amount'] as const
const CELL_TYPES: Record<(typeof LINE_ITEM_CELLS)[number], FieldType> = {
  description: 'string',
  quantity: 'number',
  unit_price: 'amount',
  amount: 'amount',
}

type SchemaFieldType = FieldType | 'line_items'

/**
 * A reviewer's corrections as the document's fields, checked against the document's schema and normalised the way
 * extraction normalises what it finds (DESIGN, Extraction: dates `YYYY-MM-DD`, amounts JSON numbers, currencies ISO
 * 4217 codes). A correction is certain (confidence 1); a field corrected to null reads as not found
 * (`{value: null, confidence: 0}`). A schema with fixed fields takes only those; `generic` (no fixed fields) takes
 * any name. A `line_items` field takes the whole table (an array of rows `{description, quantity, unit_price,
 * amount}`), which replaces the extracted rows, each cell normalised with confidence 1 (null: an empty table).
 * A name, value or row the schema cannot hold is refused (INVALID_PARAMETER) and nothing changes.
 */
export function correctedValues(
  schemaId: string | null,
  definition: PipelineDefinition,
  corrections: Readonly<Record<string, Correction>>,
): Record<string, FieldValue | LineItemValue[]> {
  const schema = resolveSchema(schemaId, definition.schemas)
  const fields = new Map<string, SchemaFieldType>((schema?.fields ?? []).map((f) => [f.name, f.type]))
  const out: Record<string, FieldValue | LineItemValue[]> = {}
  for (const [name, value] of Object.entries(corrections)) {
    if (fields.size > 0 && !fields.has(name)) {
      throw new DomainError(
        'INVALID_PARAMETER',
        `data.${name}: not a field of schema ${schemaId} (its fields: ${[...fields.keys()].join(', ')})`,
      )
    }
    const type = fields.get(name) ?? 'string'
    if (type === 'line_items') {
      out[name] = value === null ? [] : lineItems(name, value)
      continue
    }
    if (Array.isArray(value)) {
      throw new DomainError('INVALID_PARAMETER', `data.${name}: a ${type} field takes one value, not a list`)
    }
    const single = value as CorrectedValue
    if (single === null) {
      out[name] = { value: null, confidence: 0 }
      continue
    }
    const normalised = normalise(type, single)
    if (normalised === null) {
      throw new DomainError('INVALID_PARAMETER', `data.${name}: ${JSON.stringify(single)} is not a valid ${type} value`)
    }
    out[name] = { value: normalised, confidence: 1 }
  }
  return out
}

/** A corrected item table: every row an object of known cells, each normalised; a row with no value is refused. */
function lineItems(name: string, rows: Correction): LineItemValue[] {
  if (!Array.isArray(rows)) {
    throw new DomainError(
      'INVALID_PARAMETER',
      `data.${name}: an array of rows {description, quantity, unit_price, amount} replaces the table`,
    )
  }
  return rows.map((row: unknown, i) => {
    const at = `data.${name}[${i}]`
    if (!row || typeof row !== 'object' || Array.isArray(row)) {
      throw new DomainError(
        'INVALID_PARAMETER',
        `${at}: a row is an object {description, quantity, unit_price, amount}`,
      )
    }
    const cells = row as Record<string, unknown>
    const unknown = Object.keys(cells).filter((k) => !(LINE_ITEM_CELLS as readonly string[]).includes(k))
    if (unknown.length) {
      throw new DomainError(
        'INVALID_PARAMETER',
        `${at}: unknown cell ${unknown.join(', ')} (cells: ${LINE_ITEM_CELLS.join(', ')})`,
      )
    }
    const item = {} as LineItemValue
    for (const cell of LINE_ITEM_CELLS) {
      const raw = cells[cell] ?? null
      if (raw === null) {
        item[cell] = { value: null, confidence: 0 }
        continue
      }
      const value = typeof raw === 'string' || typeof raw === 'number' ? normalise(CELL_TYPES[cell], raw) : null
      if (value === null) {
        throw new DomainError(
          'INVALID_PARAMETER',
          `${at}.${cell}: ${JSON.stringify(raw)} is not a valid ${CELL_TYPES[cell]} value`,
        )
      }
      item[cell] = { value, confidence: 1 }
    }
    if (LINE_ITEM_CELLS.every((c) => item[c].value === null)) {
      throw new DomainError('INVALID_PARAMETER', `${at}: a row needs at least one cell`)
    }
    return item
  })
}

/** A typed number stands as it is for a numeric field and as written for a string one; text is read as extraction reads it. */
function normalise(type: FieldType, value: string | number): string | number | null {
  if (typeof value === 'number') {
    if (type === 'amount' || type === 'number') return Number.isFinite(value) ? value : null
    return type === 'string' ? String(value) : null
  }
  return normaliseFieldValue(value, type)?.value ?? null
}
