import { describe, expect, it } from 'vitest'
import { layoutPageText } from './pdf-page-text.ts'

const item = (str: string, x: number, y: number, size = 10) => ({
  str,
  transform: [size, 0, 0, size, x, y],
  width: str.length * size * 0.5,
  height: size,
})

describe('layoutPageText', () => {
  it('orders runs top to bottom, left to right, spaces near runs and separates columns', () => {
    const text = layoutPageText([
      item('120.00', 400, 716),
      item('Total', 50, 716),
      item('Invoice', 50, 730),
      item('No: 7', 88, 730),
      item('Footer', 50, 100),
    ])
    expect(text).toBe('Invoice No: 7\nTotal   120.00\n\nFooter')
  })
})
