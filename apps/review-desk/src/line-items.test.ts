import { describe, expect, it } from 'vitest'
import { parseTable, tableText } from './line-items-table.ts'

// Issue 37/38: a reviewer's `data.line_items` replaces the extracted table (rows of plain values).
describe('the line-item table as typed in the desk', () => {
  it('reads extracted rows as text and gives the API rows of plain values, empty rows dropped', () => {
    const extracted = [
      {
        description: { value: 'Hosting', confidence: 0.8 },
        quantity: { value: 2, confidence: 0.9 },
        unit_price: { value: 9.5, confidence: 0.9 },
        amount: { value: 19, confidence: 0.9 },
      },
    ]
    const table = tableText(extracted)
    expect(table).toEqual([['Hosting', '2', '9.5', '19']])
    expect(parseTable([...table, ['', ' ', '', ''], ['Support', '1', '', '40.00']])).toEqual({
      ok: true,
      rows: [
        { description: 'Hosting', quantity: 2, unit_price: 9.5, amount: 19 },
        { description: 'Support', quantity: 1, unit_price: null, amount: 40 },
      ],
    })
  })

  it('names the first cell that is not a number', () => {
    expect(parseTable([['Tea', 'two', '1.00', '2.00']])).toMatchObject({ ok: false, row: 0, column: 'quantity' })
    expect(tableText(null)).toEqual([])
  })
})
