import { z } from 'zod'

export const FieldType = z.enum(['string', 'number', 'date', 'amount', 'currency'])
export type FieldType = z.infer<typeof FieldType>

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'im')
    return true
  } catch {
    return false
  }
}

export const FieldDefinition = z.object({
  name: z.string().min(1).max(100),
  /** A value type, or `line_items`: an array of rows `{description, quantity, unit_price, amount}` (an item table). */
  type: z.union([FieldType, z.literal('line_items')]),
  /** Words that label the field in a document ("Invoice No", "Invoice #"). Default: the name, humanised. */
  labels: z.array(z.string().min(1).max(100)).max(50).optional(),
  /** A regex (case-insensitive, multiline); its first capture group (or whole match) is the value. */
  pattern: z.string().min(1).max(1000).refine(compiles, 'pattern must be a valid regular expression').optional(),
  required: z.boolean().optional(),
})
export type FieldDefinition = z.infer<typeof FieldDefinition>

export const SchemaDefinition = z.object({
  fields: z.array(FieldDefinition).max(200),
  /**
   * Set on the built-in schemas: which built-in extractor backs it. A declared schema may set it to
   * extend a built-in (its own extra fields are read by label, the built-in ones by the built-in).
   */
  builtin: z.enum(['invoice', 'generic']).optional(),
})
export type SchemaDefinition = z.infer<typeof SchemaDefinition>

export const DocumentType = z.object({
  name: z.string().min(1),
  keywords: z.array(z.string().min(1)).default([]),
  schema_id: z.string().min(1).nullable().optional(),
})
export type DocumentType = z.input<typeof DocumentType>

export const SplitMode = z.enum(['none', 'per_page', 'by_type'])
export type SplitMode = z.infer<typeof SplitMode>

/**
 * One extracted field. Not found: `{ value: null, confidence: 0 }`. `page` (1-based) and `bbox`
 * (`[x0, y0, x1, y1]` in page fractions) say where it was read, each omitted when unknown.
 */
export type FieldValue = {
  value: string | number | null
  confidence: number
  page?: number
  bbox?: [number, number, number, number]
}

/** One row of an item table, each cell a field value (DESIGN, Extraction: `line_items`). */
export type LineItem = {
  description: FieldValue
  quantity: FieldValue
  unit_price: FieldValue
  amount: FieldValue
}

export type ExtractedFields = Record<string, FieldValue>

/** What a schema's extraction returns: field values, and `line_items` rows for a field of that type. */
export type ExtractedData = Record<string, FieldValue | LineItem[]>

export const NOT_FOUND: Readonly<FieldValue> = Object.freeze({ value: null, confidence: 0 })

/** Extracted data without its item tables: the single-valued fields, for code that reads values one by one. */
export function scalarFields(data: ExtractedData): ExtractedFields {
  const out: ExtractedFields = {}
  for (const [name, v] of Object.entries(data)) if (!Array.isArray(v)) out[name] = v
  return out
}
