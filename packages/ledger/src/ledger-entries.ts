import { type Db, KEYSET_ORDER, type KeysetRow, keysetAfter, keysetPage, keysetPosition } from '@quire/db'
import { ENTRY_ACCOUNTS, type LedgerAccount, type LedgerEntryKind } from './ledger.ts'

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

/** An entry row, or a hold in the shape of its `reserve` entry: what a page is cut from. */
type Row = {
  id: string
  jobId: string | null
  kind: LedgerEntryKind
  amount: number
  debitAccount: LedgerAccount
  creditAccount: LedgerAccount
  createdAt: Date
}

/**
 * A workspace's ledger entries, newest first, keyset-paginated on (created_at, id) like GET /v1/jobs: entries added
 * while a client pages cause no duplicates, because the cursor names a position, not an offset.
 *
 * A reservation is its hold (migration `*_reserve_recorded_by_hold`): each hold of a positive amount is listed as
 * the `reserve` entry, with the hold's id and time; the retired `reserve` rows of ledger_entries are not read. Both
 * sources are read from the same position and merged, so a page is the same as if they were one table.
 */
export async function listLedgerEntries(
  db: Db,
  opts: { workspaceId: string; limit: number; cursor?: string; jobId?: string; kind?: LedgerEntryKind },
): Promise<{ data: LedgerEntryView[]; nextCursor: string | null; hasMore: boolean }> {
  const after = keysetAfter(opts.cursor)
  const job = opts.jobId ? { jobId: opts.jobId } : {}
  const [entries, holds] = await Promise.all([
    opts.kind === 'reserve'
      ? []
      : db.ledgerEntry.findMany({
          where: {
            workspaceId: opts.workspaceId,
            ...job,
            ...(opts.kind ? { kind: opts.kind } : { kind: { not: 'reserve' as const } }),
            ...after,
          },
          orderBy: KEYSET_ORDER,
          take: opts.limit + 1,
        }),
    opts.kind && opts.kind !== 'reserve' ? [] : holdsFrom(db, { ...opts, position: keysetPosition(opts.cursor) }),
  ])
  const reserves: Row[] = holds.map((h) => ({
    id: h.id,
    jobId: h.job_id,
    kind: 'reserve',
    amount: h.amount,
    debitAccount: ENTRY_ACCOUNTS.reserve.debit,
    creditAccount: ENTRY_ACCOUNTS.reserve.credit,
    createdAt: h.created_at,
  }))
  const { page, hasMore, nextCursor } = keysetPage([...entries, ...reserves].sort(newestFirst), opts.limit)
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

/**
 * A workspace's holds of a positive amount from a position on, in KEYSET_ORDER: read from `ledger_holds`, the table's
 * and those still kept in their job's row (migration `*_lone_job_file_and_hold_in_job_row`), as one.
 */
function holdsFrom(
  db: Db,
  opts: { workspaceId: string; limit: number; jobId?: string; position: KeysetRow | null },
): Promise<{ id: string; job_id: string; amount: number; created_at: Date }[]> {
  // An ISO string: a `timestamp` column holds UTC wall-clock time, and the string's zone is ignored by the cast.
  const at = opts.position?.createdAt.toISOString() ?? null
  return db.$queryRaw`
    SELECT id, job_id, amount, created_at FROM ledger_holds
    WHERE workspace_id = ${opts.workspaceId} AND amount > 0
      AND (${opts.jobId ?? null}::text IS NULL OR job_id = ${opts.jobId ?? null}::text)
      AND (${at}::timestamp(3) IS NULL OR (created_at, id) < (${at}::timestamp(3), ${opts.position?.id ?? null}::text))
    ORDER BY created_at DESC, id DESC
    LIMIT ${opts.limit + 1}`
}

/**
 * KEYSET_ORDER: created_at, then id, both descending. Ids are a lower-case prefix, `_` and hex (`led_…`, `hold_job_…`),
 * which every collation orders as JavaScript does.
 */
const newestFirst = (a: Row, b: Row) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
