export { parseInput } from '@quire/domain'
import { z } from 'zod'

/** Query and form values arrive as string or string[]; single-valued parameters take the first. */
export const first = (v: unknown): string | undefined =>
  Array.isArray(v) ? v[0] : typeof v === 'string' ? v : undefined

/** Page-numbered lists (pipelines, webhooks): page ≥ 1, page_size 1..100, default 25. */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(25),
})
