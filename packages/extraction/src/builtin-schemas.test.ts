import { describe, expect, it } from 'vitest'
import { BUILTIN_SCHEMAS, INVOICE_FIELDS, resolveSchema, SchemaDefinition } from './index.ts'

describe('BUILTIN_SCHEMAS and resolveSchema', () => {
  it('has invoice (its eight fields and line_items) and generic, both valid schema definitions', () => {
    // DESIGN, Extraction: `invoice` also has `line_items`, an array of rows.
    expect(BUILTIN_SCHEMAS.invoice.fields.map((f) => f.name)).toEqual([...INVOICE_FIELDS, 'line_items'])
    expect(BUILTIN_SCHEMAS.invoice.fields.at(-1)).toMatchObject({ type: 'line_items', required: false })
    expect(BUILTIN_SCHEMAS.invoice.fields.find((f) => f.name === 'amount')).toMatchObject({ type: 'amount' })
    expect(BUILTIN_SCHEMAS.generic).toEqual({ builtin: 'generic', fields: [] })
    expect(SchemaDefinition.parse(BUILTIN_SCHEMAS.invoice)).toEqual(BUILTIN_SCHEMAS.invoice)
    expect(Object.isFrozen(BUILTIN_SCHEMAS.invoice.fields)).toBe(true)
  })

  it('resolves the declared schema first, then the built-in, else null', () => {
    const declared = { invoice: { fields: [{ name: 'total', type: 'amount' as const }] }, po: { fields: [] } }
    expect(resolveSchema('invoice', declared)).toBe(declared.invoice)
    expect(resolveSchema('po', declared)).toBe(declared.po)
    expect(resolveSchema('generic', declared)).toBe(BUILTIN_SCHEMAS.generic)
    expect(resolveSchema('invoice', undefined)).toBe(BUILTIN_SCHEMAS.invoice)
    expect(resolveSchema('unknown', declared)).toBeNull()
    expect(resolveSchema('constructor', {})).toBeNull()
    expect(resolveSchema(null, declared)).toBeNull()
  })

  it('validates declared schemas, including that a pattern compiles', () => {
    expect(SchemaDefinition.safeParse({ fields: [{ name: 'x', type: 'string', pattern: '(' }] }).success).toBe(false)
    expect(SchemaDefinition.safeParse({ fields: [{ name: 'x', type: 'colour' }] }).success).toBe(false)
    expect(
      SchemaDefinition.safeParse({
        fields: [{ name: 'x', type: 'date', labels: ['Date'], pattern: '\\d{4}', required: true }],
      }).success,
    ).toBe(true)
  })
})
