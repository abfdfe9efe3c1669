import { DomainError } from '@quire/domain'
import type { Db } from '@quire/db'
import type { LedgerAccount, LedgerEntryKind } from './ledger.ts'

export type LedgerEntryView = {
  id: string
  job_id: string | null
  kind: LedgerEntryKind
  amount: number
  /** The account the amount left and the one it entered (double entry). */
  debit_account: LedgerAccount
  credit_account: LedgerAccount
  created_at: string
}

type Cursor = { t: string; id: string }

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url')

function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor
    if (typeof c.t !== 'string' || typeof c.id !== 'string' || Number.isNaN(Date.parse(c.t))) throw new Error()
    return c
  } catch {
    throw new DomainError('INVALID_PARAMETER', 'cursor is not one this service issued')
  }
}

/**
 * A workspace's ledger entries, newest first, keyset-paginated on (created_at, id) like GET /v1/jobs: entries added
 * while a client pages cause no duplicates, because the cursor names a position, not an offset.
 */
export async function listLedgerEntries(
  db: Db,
  opts: { workspaceId: string; limit: number; cursor?: string; jobId?: string; kind?: LedgerEntryKind },
): Promise<{ data: LedgerEntryView[]; nextCursor: string | null; hasMore: boolean }> {
  const c = opts.cursor ? decodeCursor(opts.cursor) : null
  const rows = await db.ledgerEntry.findMany({
    where: {
      workspaceId: opts.workspaceId,
      ...(opts.jobId ? { jobId: opts.jobId } : {}),
      ...(opts.kind ? { kind: opts.kind } : {}),
      ...(c ? { OR: [{ createdAt: { lt: new Date(c.t) } }, { createdAt: new Date(c.t), id: { lt: c.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit + 1,
  })
  const hasMore = rows.length > opts.limit
  const page = rows.slice(0, opts.limit)
  const last = page.at(-1)
  return {
    data: page.map((r) => ({
      id: r.id,
      job_id: r.jobId,
      kind: r.kind,
      amount: r.amount,
      debit_account: r.debitAccount,
      credit_account: r.creditAccount,
      created_at: r.createdAt.toISOString(),
    })),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor({ t: last.createdAt.toISOString(), id: last.id }) : null,
  }
}
