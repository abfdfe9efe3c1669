import { INVOICE_FIELDS, type InvoiceField } from './extract-invoice.ts'
import { INVOICE_FIELD_SPECS } from './invoice-labels.ts'
import type { FieldDefinition, SchemaDefinition } from './schema.ts'

export const BUILTIN_SCHEMA_IDS = ['invoice', 'generic'] as const
export type BuiltinSchemaId = (typeof BUILTIN_SCHEMA_IDS)[number]

function invoiceField(name: InvoiceField): FieldDefinition {
  const spec = INVOICE_FIELD_SPECS.find((s) => s.name === name)!
  return {
    name,
    type: spec.type,
    labels: spec.labels
      .map((l) => l.text)
      .filter((t) => !t.includes('{'))
      .slice(0, 12),
    required: false,
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * The schemas every workspace can use by id without declaring them (DESIGN, Extraction).
 * `invoice` lists its fields with their main labels (the built-in extractor knows many more);
 * `generic` has no fixed fields: it returns the key/value pairs found in the text.
 */
export const BUILTIN_SCHEMAS: Readonly<Record<BuiltinSchemaId, SchemaDefinition>> = deepFreeze({
  invoice: {
    builtin: 'invoice',
    fields: [...INVOICE_FIELDS.map(invoiceField), { name: 'line_items', type: 'line_items', required: false }],
  },
  generic: { builtin: 'generic', fields: [] },
})

export function isBuiltinSchemaId(id: string): id is BuiltinSchemaId {
  return (BUILTIN_SCHEMA_IDS as readonly string[]).includes(id)
}

/** The schema a document is extracted with: the workspace's declared one, else the built-in, else null. */
export function resolveSchema(
  schemaId: string | null | undefined,
  declaredSchemas?: Readonly<Record<string, SchemaDefinition>> | null,
): SchemaDefinition | null {
  if (!schemaId) return null
  if (declaredSchemas && Object.hasOwn(declaredSchemas, schemaId)) return declaredSchemas[schemaId] ?? null
  return isBuiltinSchemaId(schemaId) ? BUILTIN_SCHEMAS[schemaId] : null
}
