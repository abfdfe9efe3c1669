import { KEYSET_ORDER, keysetAfter, keysetPage, type Db } from '@quire/db'
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

/**
 * A workspace's ledger entries, newest first, keyset-paginated on (created_at, id) like GET /v1/jobs: entries added
 * while a client pages cause no duplicates, because the cursor names a position, not an offset.
 */
export async function listLedgerEntries(
  db: Db,
  opts: { workspaceId: string; limit: number; cursor?: string; jobId?: string; kind?: LedgerEntryKind },
): Promise<{ data: LedgerEntryView[]; nextCursor: string | null; hasMore: boolean }> {
  const rows = await db.ledgerEntry.findMany({
    where: {
      workspaceId: opts.workspaceId,
      ...(opts.jobId ? { jobId: opts.jobId } : {}),
      ...(opts.kind ? { kind: opts.kind } : {}),
      ...keysetAfter(opts.cursor),
    },
    orderBy: KEYSET_ORDER,
    take: opts.limit + 1,
  })
  const { page, hasMore, nextCursor } = keysetPage(rows, opts.limit)
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
    nextCursor,
  }
}
