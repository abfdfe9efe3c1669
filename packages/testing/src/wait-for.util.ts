/** Options of {@link waitFor}. */
export type WaitForOptions = {
  /** Give up after this many milliseconds. Default 5000. */
  timeoutMs?: number
  /** Poll interval in milliseconds. Default 25. */
  intervalMs?: number
  /** Text included in the timeout error. */
  message?: string
}

/**
 * Polls `fn` until it returns a truthy value and resolves with that value. A throw from `fn`
 * counts as "not yet" (so `expect(...)` assertions can be polled); on timeout the promise rejects
 * with the last error, or a timeout error when `fn` only returned falsy values.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 25, message }: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await fn()
      if (value) return value as NonNullable<T>
      lastError = undefined
    } catch (err) {
      lastError = err
    }
    if (Date.now() >= deadline) {
      if (lastError instanceof Error) throw lastError
      throw new Error(`waitFor timed out after ${timeoutMs} ms${message ? `: ${message}` : ''}`)
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))))
  }
}
