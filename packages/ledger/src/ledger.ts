import { DomainError, holdIdFor, MAX_CREDITS, newId } from '@quire/domain'
import type { RawSql } from '@quire/db'

// Double-entry credits in PostgreSQL, two-phase in the manner of TigerBeetle's pending / post / void transfers.
// Each workspace has three accounts (available, reserved, spent) and grants come from a shared `issuance` account.
// Every ledger entry moves a positive amount from one account to another:
//
//   grant    issuance  -> available        reserve  available -> reserved   (the pending transfer: the hold itself)
//   settle   reserved  -> spent            release  reserved  -> available  (post: at most the hold, rest released)
//   void     reserved  -> available        expire   reserved  -> available  (the whole hold back)
//
// A reservation is recorded by its hold alone, the pending transfer of TigerBeetle's model (migration
// `*_reserve_recorded_by_hold`): the ledger lists and reconciles each hold as its `reserve` entry. The
// workspaces.credits_* columns cache each account's sum of entries and are changed in the same SQL statement
// as the entries, so they cannot drift apart; `reconcileLedger` recomputes them to prove it. Every write is one
// statement whose WHERE clause is the check (balance, spending cap, hold still pending): PostgreSQL decides, the app
// never reads a value and writes a decision back.

export type LedgerEntryKind = 'grant' | 'reserve' | 'settle' | 'release' | 'void' | 'expire'
export type LedgerAccount = 'issuance' | 'available' | 'reserved' | 'spent'

/** The account pair each kind of entry moves credits along (also a CHECK constraint on ledger_entries). */
export const ENTRY_ACCOUNTS: Record<LedgerEntryKind, { debit: LedgerAccount; credit: LedgerAccount }> = {
  grant: { debit: 'issuance', credit: 'available' },
  reserve: { debit: 'available', credit: 'reserved' },
  settle: { debit: 'reserved', credit: 'spent' },
  release: { debit: 'reserved', credit: 'available' },
  void: { debit: 'reserved', credit: 'available' },
  expire: { debit: 'reserved', credit: 'available' },
}

export type ReserveResult =
  | { ok: true; holdId: string }
  | { ok: false; reason: 'insufficient_credits' | 'spending_cap' }

export type Balance = { available: number; reserved: number; spent: number; spending_cap: number | null }

/** Balances are PostgreSQL `integer` columns: no amount may exceed what one holds (MAX_CREDITS). */
export function assertAmount(amount: number, what = 'amount') {
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > MAX_CREDITS) {
    throw new RangeError(`ledger ${what} must be an integer in 0..${MAX_CREDITS}: ${amount}`)
  }
}

/**
 * Places a hold of `amount` credits for a job: one statement that moves available -> reserved, counts the amount
 * against the spending cap of the current UTC month and inserts the hold (its `reserve` entry), all only if the
 * balance and the cap allow it. Concurrent reservations on a workspace serialise on its row; each re-checks the
 * WHERE clause against the committed balance, so N racers for the last credits get exactly floor(balance / cost).
 * Reserving again for the same job returns the existing hold (no second reservation).
 *
 * The statement is a call of `ledger_reserve_credits` (migrations `*_ledger_reserve_function`,
 * `*_ledger_reserve_rows_before_queue`, `*_reserve_recorded_by_hold`): the hold is inserted first (deleted again on a
 * refusal), then reservations on one workspace queue in order on an advisory lock, instead of all waking on every
 * commit of its row, for the conditional UPDATE; plans are kept for the session. Under contention the row lock is held from the UPDATE
 * to COMMIT, so throughput on a hot workspace is about 1 / (that time): keep the reservation late in a transaction
 * (as createJob does).
 *
 * `now` (tests only) picks the month for the spending cap; by default PostgreSQL's clock decides.
 */
export async function reserveCredits(
  sql: RawSql,
  opts: { workspaceId: string; jobId: string; amount: number; now?: Date },
): Promise<ReserveResult> {
  assertAmount(opts.amount)
  const holdId = holdIdFor(opts.jobId)
  const now = opts.now?.toISOString() ?? null
  const rows = await sql.$queryRaw<{ held: boolean }[]>`
    SELECT ledger_reserve_credits(${opts.workspaceId}, ${opts.jobId}, ${holdId}, ${opts.amount}::int,
                                  ${now}::timestamptz, NULL) AS held`
  if (rows[0]?.held === true) return { ok: true, holdId }
  return explainRefusal(sql, { ...opts, holdId, now })
}

/**
 * Why a reservation that `ledger_reserve_credits` refused (called by reserveCredits, or inside a larger statement
 * such as `submit_job`) was refused; `ok` when the job's hold exists after all (a repeated reservation).
 */
export function explainReservationRefusal(
  sql: RawSql,
  opts: { workspaceId: string; jobId: string; amount: number; now?: Date },
): Promise<ReserveResult> {
  return explainRefusal(sql, { ...opts, holdId: holdIdFor(opts.jobId), now: opts.now?.toISOString() ?? null })
}

/**
 * The reservation matched no row. Says why, for the error message only: the decision was already taken by the
 * UPDATE above, and a concurrent change can at worst make this name the other of the two reasons.
 */
async function explainRefusal(
  sql: RawSql,
  opts: { workspaceId: string; jobId: string; amount: number; holdId: string; now: string | null },
): Promise<ReserveResult> {
  const [row] = await sql.$queryRaw<
    { available: number; cap: number | null; used: number; hold_ws: string | null; hold_amount: number | null }[]
  >`
    SELECT w.credits_available AS available, w.spending_cap AS cap,
           CASE WHEN w.spend_period = date_trunc('month', COALESCE(${opts.now}::timestamptz, now()) AT TIME ZONE 'UTC')::date
                THEN w.spend_period_used ELSE 0 END AS used,
           h.workspace_id AS hold_ws, h.amount AS hold_amount
    FROM workspaces w LEFT JOIN ledger_holds h ON h.id = ${opts.holdId}
    WHERE w.id = ${opts.workspaceId}`
  if (!row) throw new Error(`workspace ${opts.workspaceId} not found`)
  if (row.hold_ws !== null) {
    if (row.hold_ws === opts.workspaceId && row.hold_amount === opts.amount) return { ok: true, holdId: opts.holdId }
    throw new Error(`job ${opts.jobId} already holds ${row.hold_amount} credits in ${row.hold_ws}`)
  }
  if (row.available < opts.amount) return { ok: false, reason: 'insufficient_credits' }
  if (row.cap !== null && row.used + opts.amount > row.cap) return { ok: false, reason: 'spending_cap' }
  // Both checks pass now: another transaction changed the balance between the two statements.
  return { ok: false, reason: 'insufficient_credits' }
}

type Resolved = { amount: number; posted: number }

/**
 * A lone submission keeps its job's pending hold in the job row (migration `*_lone_job_file_and_hold_in_job_row`);
 * before a hold is resolved it moves into `credit_holds`, where resolved holds are kept. One statement, a no-op for a
 * hold that is there already; the balances do not change (the same hold, in another place).
 */
async function holdToTable(sql: RawSql, jobId: string): Promise<void> {
  await sql.$executeRaw`SELECT ledger_hold_to_table(${jobId})`
}

/**
 * Posts a job's hold for what it used, never more than held, and releases the rest: one statement that flips the
 * hold from pending to posted and writes the balances and entries only if the flip happened. A retried stage, a
 * worker that died mid-settlement (its transaction rolled back) or a concurrent settle finds the hold no longer
 * pending and gets null: a hold is posted at most once, and a unique index on (job, kind) backs that up.
 */
export async function settleCredits(
  sql: RawSql,
  opts: { jobId: string; used: number },
): Promise<{ posted: number } | null> {
  assertAmount(opts.used, 'used')
  await holdToTable(sql, opts.jobId)
  const rows = await sql.$queryRaw<Resolved[]>`
    WITH h AS (
      UPDATE credit_holds SET status = 'posted', posted = LEAST(${opts.used}::int, amount),
                              resolved_at = clock_timestamp() AT TIME ZONE 'UTC'
      WHERE id = ${holdIdFor(opts.jobId)} AND status = 'pending'
      RETURNING workspace_id, job_id, amount, posted, period
    ), ws AS (
      UPDATE workspaces w SET
        credits_reserved = w.credits_reserved - h.amount,
        credits_spent = w.credits_spent + h.posted,
        credits_available = w.credits_available + (h.amount - h.posted),
        spend_period_used = w.spend_period_used - CASE WHEN w.spend_period = h.period THEN h.amount - h.posted ELSE 0 END
      FROM h WHERE w.id = h.workspace_id
    ), entries AS (
      INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
      SELECT ${newId('led')}::text, workspace_id, job_id, 'settle'::"LedgerEntryKind", 'reserved'::"LedgerAccount",
             'spent'::"LedgerAccount", posted, clock_timestamp() AT TIME ZONE 'UTC'
      FROM h WHERE posted > 0
      UNION ALL
      SELECT ${newId('led')}::text, workspace_id, job_id, 'release'::"LedgerEntryKind", 'reserved'::"LedgerAccount",
             'available'::"LedgerAccount", amount - posted, clock_timestamp() AT TIME ZONE 'UTC'
      FROM h WHERE amount > posted
    )
    SELECT amount, posted FROM h`
  const hold = rows[0]
  return hold ? { posted: hold.posted } : null
}

/**
 * Releases a whole hold: `void` when its job failed or was cancelled, `expire` when the sweeper found its job gone.
 * Idempotent like settlement; a hold that was already posted, voided or expired is left alone (null).
 */
export async function voidCredits(
  sql: RawSql,
  opts: { jobId: string; reason?: 'void' | 'expire' },
): Promise<{ released: number } | null> {
  const kind = opts.reason ?? 'void'
  const status = kind === 'void' ? 'voided' : 'expired'
  await holdToTable(sql, opts.jobId)
  const rows = await sql.$queryRaw<Resolved[]>`
    WITH h AS (
      UPDATE credit_holds SET status = ${status}::"HoldStatus", posted = 0,
                              resolved_at = clock_timestamp() AT TIME ZONE 'UTC'
      WHERE id = ${holdIdFor(opts.jobId)} AND status = 'pending'
      RETURNING workspace_id, job_id, amount, period
    ), ws AS (
      UPDATE workspaces w SET
        credits_reserved = w.credits_reserved - h.amount,
        credits_available = w.credits_available + h.amount,
        spend_period_used = w.spend_period_used - CASE WHEN w.spend_period = h.period THEN h.amount ELSE 0 END
      FROM h WHERE w.id = h.workspace_id
    ), entry AS (
      INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
      SELECT ${newId('led')}::text, workspace_id, job_id, ${kind}::"LedgerEntryKind", 'reserved'::"LedgerAccount",
             'available'::"LedgerAccount", amount, clock_timestamp() AT TIME ZONE 'UTC'
      FROM h WHERE amount > 0
    )
    SELECT amount, 0 AS posted FROM h`
  const hold = rows[0]
  return hold ? { released: hold.amount } : null
}

/** Adds credits to a workspace (issuance -> available) and returns the new balance. */
export async function grantCredits(sql: RawSql, opts: { workspaceId: string; amount: number }): Promise<Balance> {
  assertAmount(opts.amount)
  const rows = await grantStatement(sql, opts).catch((err: unknown) => {
    if (isBalanceOverflow(err)) {
      throw new DomainError('INVALID_PARAMETER', `a grant of ${opts.amount} would take the balance past ${MAX_CREDITS}`)
    }
    throw err
  })
  if (!rows[0]) throw new Error(`workspace ${opts.workspaceId} not found`)
  return toBalance(rows[0])
}

function grantStatement(sql: RawSql, opts: { workspaceId: string; amount: number }) {
  return sql.$queryRaw<BalanceRow[]>`
    WITH ws AS (
      UPDATE workspaces SET credits_available = credits_available + ${opts.amount}::int
      WHERE id = ${opts.workspaceId}
      RETURNING id, credits_available, credits_reserved, credits_spent, spending_cap
    ), entry AS (
      INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
      SELECT ${newId('led')}::text, ws.id, NULL, 'grant'::"LedgerEntryKind", 'issuance'::"LedgerAccount",
             'available'::"LedgerAccount", ${opts.amount}::int, clock_timestamp() AT TIME ZONE 'UTC'
      FROM ws WHERE ${opts.amount}::int > 0
    )
    SELECT * FROM ws`
}

/** A grant that would take a balance past what its column holds (PostgreSQL's numeric_value_out_of_range). */
const isBalanceOverflow = (err: unknown): boolean => {
  const e = err as { code?: unknown; meta?: { code?: unknown }; message?: unknown }
  return e.code === '22003' || e.meta?.code === '22003' || /integer out of range/.test(String(e.message ?? ''))
}

type BalanceRow = {
  credits_available: number
  credits_reserved: number
  credits_spent: number
  spending_cap: number | null
}

const toBalance = (r: BalanceRow): Balance => ({
  available: r.credits_available,
  reserved: r.credits_reserved,
  spent: r.credits_spent,
  spending_cap: r.spending_cap,
})

export async function getBalance(sql: RawSql, workspaceId: string): Promise<Balance> {
  const rows = await sql.$queryRaw<BalanceRow[]>`
    SELECT credits_available, credits_reserved, credits_spent, spending_cap FROM workspaces WHERE id = ${workspaceId}`
  if (!rows[0]) throw new Error(`workspace ${workspaceId} not found`)
  return toBalance(rows[0])
}
