/** A delivery succeeds on any 2xx response (spec); anything else, or no response, is a failed attempt. */
export const receiverAccepted = (statusCode: number | null | undefined): boolean =>
  statusCode != null && statusCode >= 200 && statusCode < 300

/** Form A defaults from the spec: 10 attempts, wait doubling from 4 s, abandoned ~35 min after the first attempt. */
export const FORM_A_RETRY_DEFAULTS = {
  baseMs: 4_000,
  maxAttempts: 10,
  giveUpMs: 2_100_000,
} as const

/**
 * Form B default schedule: the delay before each of the eight retries, in milliseconds.
 * 10 s, 1 min, 10 min, 30 min, 1 h, 3 h, 7 h, 12 h — roughly exponential, summing to
 * 85 270 000 ms (23 h 41 min 10 s), i.e. the spec's "eight retries over about 24 hours".
 * Retry n happens `sum(schedule[0..n-1])` after the first attempt failed.
 */
export const FORM_B_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  10_000, 60_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 25_200_000, 43_200_000,
])

/** Options of {@link formARetryDelayMs}. */
export type FormARetryDelayOptions = {
  /** Wait before the first retry. Default 4000. */
  baseMs?: number
  /** Upper bound of any single wait. Default `baseMs * 256` (~17 min with the default base). */
  maxDelayMs?: number
}

/**
 * Form A wait before retry number `attempt` (1 = the first retry, i.e. the second attempt):
 * `baseMs * 2^(attempt-1)`, capped at `maxDelayMs`. With defaults: 4 s, 8 s, 16 s, ... 1024 s.
 * @throws RangeError when `attempt` is not an integer >= 1.
 */
export function formARetryDelayMs(
  attempt: number,
  { baseMs = FORM_A_RETRY_DEFAULTS.baseMs, maxDelayMs }: FormARetryDelayOptions = {},
): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`)
  const cap = maxDelayMs ?? baseMs * 256
  // 2^(attempt-1) overflows to Infinity for absurd attempts; Math.min keeps the cap.
  return Math.min(cap, baseMs * 2 ** (attempt - 1))
}

/** Input of {@link formAShouldRetry}. */
export type FormAShouldRetryOptions = FormARetryDelayOptions & {
  /** Attempts already made, including the one that just failed (>= 1). */
  attemptsMade: number
  /** When the first attempt started (epoch ms or Date). */
  firstAttemptAt: number | Date
  /** Current time (epoch ms or Date). */
  now: number | Date
  /** Default 10. */
  maxAttempts?: number
  /** Abandon when the next attempt would start later than this after the first. Default 2 100 000 (35 min). */
  giveUpMs?: number
}

/** Decision of {@link formAShouldRetry}. */
export type FormARetryDecision =
  | { retry: true; delayMs: number; attempt: number }
  | { retry: false; reason: 'max_attempts' | 'give_up_window' }

/**
 * Decides whether a failed Form A delivery gets another attempt and when. `attempt` in the
 * answer is the 1-based number of the retry to schedule (the next attempt is `attemptsMade + 1`).
 * Gives up when `maxAttempts` have been made, or when the next attempt would start after
 * `firstAttemptAt + giveUpMs`. With defaults and fast failures all 10 attempts fit (the delays
 * sum to 2044 s < 2100 s); slow failures (timeouts) lose the last attempt to the window.
 */
export function formAShouldRetry(options: FormAShouldRetryOptions): FormARetryDecision {
  const maxAttempts = options.maxAttempts ?? FORM_A_RETRY_DEFAULTS.maxAttempts
  const giveUpMs = options.giveUpMs ?? FORM_A_RETRY_DEFAULTS.giveUpMs
  if (options.attemptsMade >= maxAttempts) return { retry: false, reason: 'max_attempts' }
  const attempt = Math.max(1, options.attemptsMade)
  const delayMs = formARetryDelayMs(attempt, options)
  const nextAt = toMs(options.now) + delayMs
  if (nextAt - toMs(options.firstAttemptAt) > giveUpMs) return { retry: false, reason: 'give_up_window' }
  return { retry: true, delayMs, attempt }
}

/**
 * Form B wait before retry `retryNumber` (1-based) from `schedule`, or null when the schedule is
 * spent (the delivery has failed for good and the webhook becomes `failing`).
 */
export function formBRetryDelayMs(
  retryNumber: number,
  schedule: readonly number[] = FORM_B_RETRY_SCHEDULE_MS,
): number | null {
  if (!Number.isInteger(retryNumber) || retryNumber < 1) return null
  return schedule[retryNumber - 1] ?? null
}

/**
 * Parses a retry schedule written as comma-separated milliseconds (e.g. the value of
 * `QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS`, `"100,200,400"`). Returns null when any entry is not a
 * non-negative integer or the list is empty.
 */
export function parseRetryScheduleMs(text: string): number[] | null {
  const parts = text.split(',').map((part) => part.trim())
  if (parts.length === 0 || parts.some((part) => !/^\d+$/.test(part))) return null
  return parts.map(Number)
}

function toMs(value: number | Date): number {
  return value instanceof Date ? value.getTime() : value
}
