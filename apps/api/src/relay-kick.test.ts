import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { throttleKicks } from './relay-kick.ts'

describe('throttleKicks', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('runs a lone kick at once, and every kick within the window after it as one pass at the window’s end', () => {
    const kick = vi.fn()
    const relay = throttleKicks(kick, 20)
    relay.kick()
    expect(kick).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(5)
    relay.kick()
    vi.advanceTimersByTime(5)
    relay.kick()
    expect(kick).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(9)
    expect(kick).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(1)
    expect(kick).toHaveBeenCalledTimes(2)
    // Idle for a window: the next kick runs at once again.
    vi.advanceTimersByTime(20)
    relay.kick()
    expect(kick).toHaveBeenCalledTimes(3)
  })

  it('flush runs a pending pass at once, and only when one is pending', () => {
    const kick = vi.fn()
    const relay = throttleKicks(kick, 20)
    relay.kick()
    relay.flush()
    expect(kick).toHaveBeenCalledTimes(1)
    relay.kick()
    relay.flush()
    expect(kick).toHaveBeenCalledTimes(2)
    vi.advanceTimersByTime(100)
    expect(kick).toHaveBeenCalledTimes(2)
  })
})
