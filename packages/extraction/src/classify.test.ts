import { describe, expect, it } from 'vitest'
import { classify, type DocumentType } from './index.ts'

const types: DocumentType[] = [
  { name: 'invoice', keywords: ['invoice', 'amount due', 'bill to'], schema_id: 'invoice' },
  { name: 'receipt', keywords: ['receipt', 'thank you for your purchase'], schema_id: 'generic' },
  { name: 'contract', keywords: ['agreement', 'hereinafter', 'party'], schema_id: null },
]

describe('classify', () => {
  it('picks the type whose keywords occur, case-insensitively and on word boundaries', () => {
    const result = classify('TAX INVOICE\nBill To: Globex\nAmount   Due: 120.00', types)
    expect(result).toMatchObject({ type: 'invoice', schemaId: 'invoice' })
    expect(result.confidence).toBeGreaterThan(0.8)
  })

  it('does not match inside other words', () => {
    // "invoices" and "partying" are not the keywords "invoice" and "party".
    expect(classify('We love partying and never send invoices.', types)).toEqual({
      type: null,
      schemaId: null,
      confidence: 0,
    })
  })

  it('scores more evidence higher and lowers confidence when two types are close', () => {
    const strong = classify('Receipt\nThank you for your purchase!\nReceipt total 5.00', types)
    const weak = classify('Some text that mentions a receipt once, far down the page. '.padStart(400, '.'), types)
    expect(strong.type).toBe('receipt')
    expect(weak.type).toBe('receipt')
    expect(strong.confidence).toBeGreaterThan(weak.confidence)
    const mixed = classify('Receipt for invoice 12', types)
    expect(mixed.confidence).toBeLessThan(strong.confidence)
  })

  it('returns no type for empty text or no declared types', () => {
    expect(classify('', types)).toEqual({ type: null, schemaId: null, confidence: 0 })
    expect(classify('invoice', [])).toEqual({ type: null, schemaId: null, confidence: 0 })
  })
})
