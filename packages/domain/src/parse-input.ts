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
