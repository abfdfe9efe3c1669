import { describe, expect, it } from 'vitest'
import { waitFor } from './wait-for.util.ts'

describe('waitFor', () => {
  it('resolves with the first truthy value', async () => {
    let calls = 0
    const value = await waitFor(() => (++calls >= 3 ? { calls } : undefined), { intervalMs: 5 })
    expect(value).toEqual({ calls: 3 })
  })

  it('supports async predicates and retries thrown assertions', async () => {
    let calls = 0
    const value = await waitFor(
      async () => {
        calls += 1
        expect(calls).toBeGreaterThan(2)
        return 'done'
      },
      { intervalMs: 5 },
    )
    expect(value).toBe('done')
  })

  it('rejects after the timeout with a message', async () => {
    await expect(waitFor(() => false, { timeoutMs: 50, intervalMs: 10, message: 'never true' })).rejects.toThrow(
      /timed out after 50 ms: never true/,
    )
  })

  it('rejects with the last thrown error on timeout', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('still failing')
        },
        { timeoutMs: 50, intervalMs: 10 },
      ),
    ).rejects.toThrow('still failing')
  })
})
