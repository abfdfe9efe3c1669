import { DomainError } from '@quire/domain'
import { z } from 'zod'

/** Parses input with a zod schema; failures become a flat 400 INVALID_PARAMETER naming the fields. */
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

/** Query and form values arrive as string or string[]; single-valued parameters take the first. */
export const first = (v: unknown): string | undefined => (Array.isArray(v) ? v[0] : typeof v === 'string' ? v : undefined)

/** Page-numbered lists (pipelines, webhooks): page ≥ 1, page_size 1..100, default 25. */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(25),
})
