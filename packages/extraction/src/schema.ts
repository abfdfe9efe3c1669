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
  type: FieldType,
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

export type ExtractedFields = Record<string, FieldValue>

export const NOT_FOUND: Readonly<FieldValue> = Object.freeze({ value: null, confidence: 0 })
