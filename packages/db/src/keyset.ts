import { DomainError } from '@quire/domain'

/**
 * Keyset pagination on (created_at, id), newest first. The cursor names a position, not an offset, so rows added
 * while a client pages never cause duplicates or gaps.
 */
export type KeysetRow = { createdAt: Date; id: string }

export const KEYSET_ORDER = [{ createdAt: 'desc' as const }, { id: 'desc' as const }]
/** Oldest first: a review queue is worked from the document that has waited longest. */
export const KEYSET_ORDER_ASC = [{ createdAt: 'asc' as const }, { id: 'asc' as const }]
export type KeysetDirection = 'desc' | 'asc'

const encode = (row: KeysetRow) =>
  Buffer.from(JSON.stringify({ t: row.createdAt.toISOString(), id: row.id })).toString('base64url')

function decode(raw: string): KeysetRow {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { t?: unknown; id?: unknown }
    if (typeof c.t !== 'string' || typeof c.id !== 'string' || Number.isNaN(Date.parse(c.t))) throw new Error()
    return { createdAt: new Date(c.t), id: c.id }
  } catch {
    throw new DomainError('INVALID_PARAMETER', 'cursor is not one this service issued')
  }
}

/** The where-clause part selecting rows after the cursor (none without one), in the order's direction. */
export function keysetAfter(cursor: string | undefined, direction: KeysetDirection = 'desc') {
  if (!cursor) return {}
  const p = decode(cursor)
  const op = direction === 'desc' ? 'lt' : 'gt'
  return { OR: [{ createdAt: { [op]: p.createdAt } }, { createdAt: p.createdAt, id: { [op]: p.id } }] }
}

/** The position a cursor names, for a query written in SQL (`(created_at, id) < (…)`); null without a cursor. */
export function keysetPosition(cursor: string | undefined): KeysetRow | null {
  return cursor ? decode(cursor) : null
}

/** Cuts `limit + 1` fetched rows to a page and names the next position. */
export function keysetPage<T extends KeysetRow>(rows: T[], limit: number) {
  const hasMore = rows.length > limit
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { page, hasMore, nextCursor: hasMore && last ? encode(last) : null }
}
