import { describe, expect, it } from 'vitest'
import { splitPages, type DocumentType } from './index.ts'

const types: DocumentType[] = [
  { name: 'invoice', keywords: ['invoice', 'amount due', 'bill to'], schema_id: 'invoice' },
  { name: 'receipt', keywords: ['receipt', 'thank you for your purchase'], schema_id: 'generic' },
  { name: 'contract', keywords: ['agreement', 'hereinafter', 'party'], schema_id: null },
]

describe('splitPages', () => {
  const pages = [
    'INVOICE 1\nBill To: A\nAmount due 10.00', // 1 invoice
    'continued: line items', // 2 (no type → joins the invoice)
    'RECEIPT\nThank you for your purchase', // 3 receipt
    'Receipt page two', // 4 receipt
    'SERVICE AGREEMENT between the party ...', // 5 contract
  ]

  it('none: one group with every page, classified on the whole text', () => {
    expect(splitPages(pages, 'none', types)).toEqual([
      { pages: [1, 2, 3, 4, 5], type: 'invoice', schemaId: 'invoice', confidence: expect.any(Number) },
    ])
  })

  it('per_page: one group per page, each classified on its own', () => {
    const groups = splitPages(pages, 'per_page', types)
    expect(groups.map((g) => [g.pages, g.type, g.schemaId])).toEqual([
      [[1], 'invoice', 'invoice'],
      [[2], null, null],
      [[3], 'receipt', 'generic'],
      [[4], 'receipt', 'generic'],
      [[5], 'contract', null],
    ])
  })

  it('by_type: consecutive pages of one type form a group; untyped pages join the previous group', () => {
    const groups = splitPages(pages, 'by_type', types)
    expect(groups.map((g) => [g.pages, g.type, g.schemaId])).toEqual([
      [[1, 2], 'invoice', 'invoice'],
      [[3, 4], 'receipt', 'generic'],
      [[5], 'contract', null],
    ])
  })

  it('by_type: leading untyped pages join the first group; "Page 1 of N" starts a new document of the same type', () => {
    const groups = splitPages(
      ['Cover letter', 'Invoice A\nPage 1 of 2', 'Invoice A continued\nPage 2 of 2', 'Invoice B\nPage 1 of 1'],
      'by_type',
      types,
    )
    expect(groups.map((g) => [g.pages, g.type])).toEqual([
      [[1, 2, 3], 'invoice'],
      [[4], 'invoice'],
    ])
  })

  it('by_type with nothing classifiable gives one untyped group; no pages gives none', () => {
    expect(splitPages(['a', 'b'], 'by_type', types)).toEqual([
      { pages: [1, 2], type: null, schemaId: null, confidence: 0 },
    ])
    expect(splitPages([], 'by_type', types)).toEqual([])
  })
})
