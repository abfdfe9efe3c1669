import type { z } from 'zod'
import { DomainError } from './domain-error.ts'

/** Parses input with a zod schema; failures become 400 INVALID_PARAMETER naming each field and what is wrong. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }))
  throw new DomainError(
    'INVALID_PARAMETER',
    issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; '),
    { issues },
  )
}

/**
 * Half of a surrogate pair standing alone (a JSON escape such as `"\ud800"` decodes to one): text that is not
 * Unicode. With the `u` flag a well-formed pair is one code point, so only lone halves match.
 */
const LONE_SURROGATE = /\p{Cs}/u

/** {@link LONE_SURROGATE}, global, for `String.replace` (a global pattern's `test` would carry `lastIndex` along). */
export const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'gu')

/**
 * Why a client's string cannot be stored as text, or null when it can: PostgreSQL refuses NUL in text, and a lone
 * surrogate is not Unicode (no UTF-8 encodes it). NUL is named first when both are present.
 */
export function unstorableText(s: string): 'nul' | 'lone-surrogate' | null {
  if (s.includes('\u0000')) return 'nul'
  if (LONE_SURROGATE.test(s)) return 'lone-surrogate'
  return null
}

/** True when a string holds no NUL and no lone surrogate (see {@link unstorableText}). */
export const isStorableText = (s: string): boolean => unstorableText(s) === null
