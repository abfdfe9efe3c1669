import { describe, expect, it } from 'vitest'
import { BUILTIN_SCHEMAS, extractFields, extractGeneric, toSnakeCase } from './index.ts'

describe('extractGeneric', () => {
  const text = `Delivery Note
Customer Name: Globex Corporation
Order #: 55-A12
Ship Date: 2024-07-01      Carrier: DHL Express
Total Weight: 12.5
Declared Value: USD 1,499.99
Phone: 0044 20 7946 0958
Currency: euro
Notes:
Leave at the back door
See https://example.com/track for updates`

  it('returns every "Key: value" pair with snake_case keys and normalised values', () => {
    const fields = extractGeneric(text)
    expect(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.value]))).toEqual({
      customer_name: 'Globex Corporation',
      order_number: '55-A12',
      ship_date: '2024-07-01',
      carrier: 'DHL Express',
      total_weight: 12.5,
      declared_value: 1499.99,
      phone: '0044 20 7946 0958',
      currency: 'EUR',
      notes: 'Leave at the back door',
    })
    for (const field of Object.values(fields)) {
      expect(field.confidence).toBeGreaterThan(0)
      expect(field.confidence).toBeLessThanOrEqual(1)
    }
    // A value taken from the next line is less certain than one on the key's line.
    expect(fields.notes!.confidence).toBeLessThan(fields.customer_name!.confidence)
  })

  it('splits several pairs on one line, keeps identifiers as text and numbers repeated keys', () => {
    const fields = extractGeneric('Invoice No: 7 Due Date: 1 March 2024 Items: 3\nNote: first\nNote: second')
    expect(fields).toMatchObject({
      invoice_no: { value: '7' },
      items: { value: 3 },
      due_date: { value: '2024-03-01' },
      note: { value: 'first' },
      note_2: { value: 'second' },
    })
  })

  it('is what the built-in generic schema returns', () => {
    expect(extractFields(text, BUILTIN_SCHEMAS.generic)).toEqual(extractGeneric(text))
    expect(extractGeneric('no pairs in this sentence at all')).toEqual({})
  })

  it('normalises keys to snake_case', () => {
    expect(toSnakeCase('Invoice #')).toBe('invoice_number')
    expect(toSnakeCase('Kunden-Nr.')).toBe('kunden_nr')
    expect(toSnakeCase('Date d’échéance')).toBe('date_d_echeance')
    expect(toSnakeCase('VAT (20%)')).toBe('vat')
    expect(toSnakeCase('customerID')).toBe('customer_id')
  })
})
