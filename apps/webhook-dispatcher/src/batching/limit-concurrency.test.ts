import { describe, expect, it } from 'vitest'
import { limitConcurrency } from './limit-concurrency.ts'

describe('limitConcurrency', () => {
  it('runs at most max calls at once, first come first served, and frees a slot when a call fails', async () => {
    const limit = limitConcurrency(2)
    let running = 0
    let peak = 0
    const started: number[] = []
    const task = (i: number) =>
      limit(async () => {
        started.push(i)
        running++
        peak = Math.max(peak, running)
        await new Promise((r) => setTimeout(r, 5))
        running--
        if (i === 1) throw new Error('receiver down')
        return i
      })
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(task))
    expect(peak).toBe(2)
    expect(started).toEqual([1, 2, 3, 4, 5])
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual(['failed', 2, 3, 4, 5])
  })
})
