import { describe, expect, it } from 'vitest'
import {
  FORM_B_RETRY_SCHEDULE_MS,
  formARetryDelayMs,
  formAShouldRetry,
  formBRetryDelayMs,
  parseRetryScheduleMs,
} from './retry.policy.ts'

const MIN = 60_000
const HOUR = 60 * MIN

describe('Form A retry policy', () => {
  it('doubles the wait from 4 s up to about 17 minutes', () => {
    const delays = Array.from({ length: 9 }, (_, i) => formARetryDelayMs(i + 1))
    expect(delays).toEqual([4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_024_000])
    expect(delays.at(-1)! / MIN).toBeCloseTo(17, 0)
  })

  it('caps a single wait at maxDelayMs (default 256 x base)', () => {
    expect(formARetryDelayMs(10)).toBe(1_024_000)
    expect(formARetryDelayMs(2000)).toBe(1_024_000)
    expect(formARetryDelayMs(4, { baseMs: 10, maxDelayMs: 50 })).toBe(50)
  })

  it('is parameterised so tests can shorten it', () => {
    expect([1, 2, 3].map((n) => formARetryDelayMs(n, { baseMs: 10 }))).toEqual([10, 20, 40])
  })

  it('rejects retry numbers below 1', () => {
    expect(() => formARetryDelayMs(0)).toThrow(RangeError)
    expect(() => formARetryDelayMs(1.5)).toThrow(RangeError)
  })

  it('fits all 10 attempts of fast failures inside the 35-minute window, then stops at max attempts', () => {
    const first = 1_000_000
    let now = first
    const schedule: number[] = []
    for (let attemptsMade = 1; ; attemptsMade++) {
      const decision = formAShouldRetry({ attemptsMade, firstAttemptAt: first, now })
      if (!decision.retry) {
        expect(decision.reason).toBe('max_attempts')
        expect(attemptsMade).toBe(10)
        break
      }
      expect(decision.attempt).toBe(attemptsMade)
      schedule.push(decision.delayMs)
      now += decision.delayMs
    }
    expect(schedule).toHaveLength(9)
    expect(now - first).toBe(2_044_000)
    expect(now - first).toBeLessThan(2_100_000)
  })

  it('gives up when the next attempt would start more than giveUpMs after the first', () => {
    // Attempts that each hang for the 30 s + 10 s timeouts push the 10th attempt past 35 minutes.
    const first = new Date('2026-01-01T00:00:00Z')
    const now = new Date(first.getTime() + 1_020_000 + 8 * 40_000 + 40_000)
    expect(formAShouldRetry({ attemptsMade: 9, firstAttemptAt: first, now })).toEqual({
      retry: false,
      reason: 'give_up_window',
    })
    expect(formAShouldRetry({ attemptsMade: 9, firstAttemptAt: first, now: first.getTime() + 1_020_000 })).toEqual({
      retry: true,
      delayMs: 1_024_000,
      attempt: 9,
    })
  })

  it('honours custom maxAttempts and giveUpMs', () => {
    expect(formAShouldRetry({ attemptsMade: 3, firstAttemptAt: 0, now: 0, maxAttempts: 3 })).toEqual({
      retry: false,
      reason: 'max_attempts',
    })
    expect(formAShouldRetry({ attemptsMade: 1, firstAttemptAt: 0, now: 0, baseMs: 10, giveUpMs: 9 })).toEqual({
      retry: false,
      reason: 'give_up_window',
    })
    expect(formAShouldRetry({ attemptsMade: 2, firstAttemptAt: 0, now: 10, baseMs: 10, giveUpMs: 100 })).toEqual({
      retry: true,
      delayMs: 20,
      attempt: 2,
    })
  })
})

describe('Form B retry policy', () => {
  it('has eight increasing delays summing to about 24 hours', () => {
    expect(FORM_B_RETRY_SCHEDULE_MS).toHaveLength(8)
    for (let i = 1; i < FORM_B_RETRY_SCHEDULE_MS.length; i++) {
      expect(FORM_B_RETRY_SCHEDULE_MS[i]!).toBeGreaterThan(FORM_B_RETRY_SCHEDULE_MS[i - 1]!)
    }
    const total = FORM_B_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThan(23 * HOUR)
    expect(total).toBeLessThanOrEqual(25 * HOUR)
  })

  it('returns each retry delay, then null once eight retries are spent', () => {
    expect(formBRetryDelayMs(1)).toBe(10_000)
    expect(formBRetryDelayMs(8)).toBe(12 * HOUR)
    expect(formBRetryDelayMs(9)).toBeNull()
    expect(formBRetryDelayMs(0)).toBeNull()
  })

  it('uses a custom schedule when given one', () => {
    const schedule = [5, 10, 20]
    expect([1, 2, 3, 4].map((n) => formBRetryDelayMs(n, schedule))).toEqual([5, 10, 20, null])
  })

  it('parses a comma-separated schedule and refuses junk', () => {
    expect(parseRetryScheduleMs('100, 200,400')).toEqual([100, 200, 400])
    expect(parseRetryScheduleMs('')).toBeNull()
    expect(parseRetryScheduleMs('100,-1')).toBeNull()
    expect(parseRetryScheduleMs('1e3')).toBeNull()
  })

  it('refuses to modify the default schedule', () => {
    expect(Object.isFrozen(FORM_B_RETRY_SCHEDULE_MS)).toBe(true)
  })
})
