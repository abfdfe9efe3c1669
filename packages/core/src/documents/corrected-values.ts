import { DomainError, type PipelineDefinition } from '@quire/domain'
import { type FieldType, normaliseFieldValue, resolveSchema } from '@quire/extraction'

export type FieldValue = { value: string | number | null; confidence: number }

/**
 * A reviewer's corrections as the document's fields, checked against the document's schema and normalised the way
 * extraction normalises what it finds (DESIGN, Extraction: dates `YYYY-MM-DD`, amounts JSON numbers, currencies ISO
 * 4217 codes). A correction is certain (confidence 1); a field corrected to null reads as not found
 * (`{value: null, confidence: 0}`). A schema with fixed fields takes only those; `generic` (no fixed fields) takes
 * any name. A name or value the schema cannot hold is refused (INVALID_PARAMETER) and nothing changes.
 */
export function correctedValues(
  schemaId: string | null,
  definition: PipelineDefinition,
  corrections: Record<string, string | number | null>,
): Record<string, FieldValue> {
  const schema = resolveSchema(schemaId, definition.schemas)
  const fields = new Map<string, FieldType>((schema?.fields ?? []).map((f) => [f.name, f.type]))
  const out: Record<string, FieldValue> = {}
  for (const [name, value] of Object.entries(corrections)) {
    if (fields.size > 0 && !fields.has(name)) {
      throw new DomainError(
        'INVALID_PARAMETER',
        `data.${name}: not a field of schema ${schemaId} (its fields: ${[...fields.keys()].join(', ')})`,
      )
    }
    if (value === null) {
      out[name] = { value: null, confidence: 0 }
      continue
    }
    const normalised = normalise(fields.get(name) ?? 'string', value)
    if (normalised === null) {
      throw new DomainError(
        'INVALID_PARAMETER',
        `data.${name}: ${JSON.stringify(value)} is not a valid ${fields.get(name)} value`,
      )
    }
    out[name] = { value: normalised, confidence: 1 }
  }
  return out
}

/** A typed number stands as it is for a numeric field and as written for a string one; text is read as extraction reads it. */
function normalise(type: FieldType, value: string | number): string | number | null {
  if (typeof value === 'number') {
    if (type === 'amount' || type === 'number') return Number.isFinite(value) ? value : null
    return type === 'string' ? String(value) : null
  }
  return normaliseFieldValue(value, type)?.value ?? null
}
