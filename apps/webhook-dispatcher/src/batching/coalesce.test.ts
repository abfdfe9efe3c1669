import { describe, expect, it } from 'vitest'
import { coalesce } from './coalesce.ts'

describe('coalesce', () => {
  it('calls made together share one batch; calls made while it runs share the next', async () => {
    const batches: number[][] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    const double = coalesce(
      async (items: readonly number[]) => {
        batches.push([...items])
        if (batches.length === 1) await gate
        return items.map((i) => i * 2)
      },
      { maxBatch: 10 },
    )
    const first = [double(1), double(2), double(3)]
    await new Promise((r) => setImmediate(r))
    const second = [double(4), double(5)]
    release()
    expect(await Promise.all([...first, ...second])).toEqual([2, 4, 6, 8, 10])
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ])
  })

  it('splits at maxBatch', async () => {
    const sizes: number[] = []
    const echo = coalesce(
      async (items: readonly string[]) => {
        sizes.push(items.length)
        return items
      },
      { maxBatch: 2 },
    )
    expect(await Promise.all(['a', 'b', 'c', 'd', 'e'].map(echo))).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(sizes).toEqual([2, 2, 1])
  })

  it('a failed batch rejects each of its calls, and the next batch runs', async () => {
    let calls = 0
    const flaky = coalesce(
      async (items: readonly number[]) => {
        calls++
        if (calls === 1) throw new Error('database unreachable')
        return items
      },
      { maxBatch: 10 },
    )
    const failed = [flaky(1), flaky(2)]
    await Promise.all(failed.map((p) => expect(p).rejects.toThrow('database unreachable')))
    expect(await flaky(3)).toBe(3)
  })

  it('with windowMs, a batch starts no sooner than windowMs after the one before it started', async () => {
    const starts: { at: number; items: number[] }[] = []
    const record = coalesce(
      async (items: readonly number[]) => {
        starts.push({ at: performance.now(), items: [...items] })
        return items
      },
      { maxBatch: 100, windowMs: 50 },
    )
    const t0 = performance.now()
    expect(await record(1)).toBe(1) // a lone call after a quiet spell runs at once
    expect(performance.now() - t0).toBeLessThan(40)
    // Calls arriving one by one within the window all wait for the next batch.
    const later: Promise<number>[] = []
    for (let i = 2; i <= 5; i++) {
      later.push(record(i))
      await new Promise((r) => setTimeout(r, 5))
    }
    expect(await Promise.all(later)).toEqual([2, 3, 4, 5])
    expect(starts.map((s) => s.items)).toEqual([[1], [2, 3, 4, 5]])
    expect(starts[1]!.at - starts[0]!.at).toBeGreaterThanOrEqual(45)
  })

  it('with windowMs, a full batch does not wait for the window', async () => {
    const sizes: number[] = []
    const record = coalesce(
      async (items: readonly number[]) => {
        sizes.push(items.length)
        return items
      },
      { maxBatch: 3, windowMs: 10_000 },
    )
    const t0 = performance.now()
    await record(0)
    expect(await Promise.all([1, 2, 3].map(record))).toEqual([1, 2, 3])
    expect(performance.now() - t0).toBeLessThan(1_000)
    expect(sizes).toEqual([1, 3])
  })
})
