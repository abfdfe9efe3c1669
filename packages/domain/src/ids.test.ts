import { describe, expect, it } from 'vitest'
import { newId } from './ids.ts'

describe('newId', () => {
  it('is the prefix and 12 random bytes in hex, and never repeats across refills of its random pool', () => {
    const ids = Array.from({ length: 2_000 }, () => newId('att'))
    for (const id of ids) expect(id).toMatch(/^att_[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // Consecutive ids share no bytes: each takes its own slice of the pool.
    const [a, b] = [ids[0]!.slice(4), ids[1]!.slice(4)]
    expect(a).not.toBe(b)
  })
})
