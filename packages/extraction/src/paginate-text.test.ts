import { describe, expect, it } from 'vitest'
import { paginateText } from './paginate-text.ts'

describe('paginateText', () => {
  it('cuts into the requested number of pages at line breaks, losing nothing', () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i} ${'x'.repeat(90)}`).join('\n')
    const pages = paginateText(text, 3)
    expect(pages).toHaveLength(3)
    expect(pages.join('\n')).toBe(text)
    for (const page of pages) expect(page.startsWith('line ')).toBe(true)
    expect(paginateText('short', 1)).toEqual(['short'])
  })
})
