import type { Db, Tx } from '@quire/db'

/**
 * A stored balance that disagrees with what the ledger's entries (each hold counted as its `reserve` entry) or its
 * holds say it should be.
 */
export type BalanceDrift = {
  workspaceId: string
  check:
    | 'available_vs_entries'
    | 'reserved_vs_entries'
    | 'spent_vs_entries'
    | 'reserved_vs_pending_holds'
    | 'spent_vs_posted_holds'
    | 'spend_period_vs_holds'
  stored: number
  computed: number
}

/** A hold whose entries do not match its state, entries of a job that has no hold, or a hold left pending by a job
 * that has finished. */
export type HoldAnomaly = {
  reason: 'entries_mismatch' | 'entries_without_hold' | 'pending_after_job_finished'
  jobId: string
  workspaceId: string
  status: string | null
  amount: number | null
  posted: number | null
  entries: Record<'reserve' | 'settle' | 'release' | 'void' | 'expire', number>
}

export type ReconcileReport = {
  workspaces: number
  holds: number
  /** Entries as the ledger lists them: each hold of a positive amount counts as its `reserve` entry. */
  entries: number
  /** Sum over every check of |stored - computed|, in credits. Zero when the ledger is consistent. */
  driftCredits: number
  drifts: BalanceDrift[]
  holdAnomalies: HoldAnomaly[]
  /** The most settle entries any one job has (at most 1; a unique index enforces it). */
  maxSettlesPerJob: number
}

const n = (v: bigint | number | null | undefined): number => Number(v ?? 0)

type WorkspaceRow = {
  id: string
  credits_available: number
  credits_reserved: number
  credits_spent: number
  spend_period_used: number
  e_available: bigint
  e_reserved: bigint
  e_spent: bigint
  h_pending: bigint
  h_posted: bigint
  h_period: bigint
}

async function workspaceDrifts(tx: Tx, ws: string | null): Promise<{ count: number; drifts: BalanceDrift[] }> {
  const rows = await tx.$queryRaw<WorkspaceRow[]>`
    WITH movements AS (
      -- Every entry but the retired 'reserve' rows, and every hold as its reservation (available -> reserved).
      SELECT workspace_id, debit_account::text AS debit, credit_account::text AS credit, amount
      FROM ledger_entries WHERE kind <> 'reserve' AND (${ws}::text IS NULL OR workspace_id = ${ws}::text)
      UNION ALL
      SELECT workspace_id, 'available', 'reserved', amount
      FROM ledger_holds WHERE (${ws}::text IS NULL OR workspace_id = ${ws}::text)
    ), e AS (
      SELECT workspace_id,
        SUM(CASE WHEN credit = 'available' THEN amount ELSE 0 END)
          - SUM(CASE WHEN debit = 'available' THEN amount ELSE 0 END) AS available,
        SUM(CASE WHEN credit = 'reserved' THEN amount ELSE 0 END)
          - SUM(CASE WHEN debit = 'reserved' THEN amount ELSE 0 END) AS reserved,
        SUM(CASE WHEN credit = 'spent' THEN amount ELSE 0 END)
          - SUM(CASE WHEN debit = 'spent' THEN amount ELSE 0 END) AS spent
      FROM movements GROUP BY workspace_id
    ), h AS (
      SELECT h.workspace_id,
        SUM(h.amount) FILTER (WHERE h.status = 'pending') AS pending,
        SUM(h.posted) FILTER (WHERE h.status = 'posted') AS posted,
        SUM(CASE h.status WHEN 'pending' THEN h.amount WHEN 'posted' THEN h.posted ELSE 0 END)
          FILTER (WHERE h.period = w.spend_period) AS period
      FROM ledger_holds h JOIN workspaces w ON w.id = h.workspace_id
      WHERE (${ws}::text IS NULL OR h.workspace_id = ${ws}::text) GROUP BY h.workspace_id
    )
    SELECT w.id, w.credits_available, w.credits_reserved, w.credits_spent, w.spend_period_used,
      COALESCE(e.available, 0)::bigint AS e_available, COALESCE(e.reserved, 0)::bigint AS e_reserved,
      COALESCE(e.spent, 0)::bigint AS e_spent, COALESCE(h.pending, 0)::bigint AS h_pending,
      COALESCE(h.posted, 0)::bigint AS h_posted, COALESCE(h.period, 0)::bigint AS h_period
    FROM workspaces w LEFT JOIN e ON e.workspace_id = w.id LEFT JOIN h ON h.workspace_id = w.id
    WHERE (${ws}::text IS NULL OR w.id = ${ws}::text)`
  const drifts: BalanceDrift[] = []
  for (const r of rows) {
    const checks: [BalanceDrift['check'], number, bigint][] = [
      ['available_vs_entries', r.credits_available, r.e_available],
      ['reserved_vs_entries', r.credits_reserved, r.e_reserved],
      ['spent_vs_entries', r.credits_spent, r.e_spent],
      ['reserved_vs_pending_holds', r.credits_reserved, r.h_pending],
      ['spent_vs_posted_holds', r.credits_spent, r.h_posted],
      ['spend_period_vs_holds', r.spend_period_used, r.h_period],
    ]
    for (const [check, stored, computed] of checks) {
      if (BigInt(stored) !== BigInt(computed)) drifts.push({ workspaceId: r.id, check, stored, computed: n(computed) })
    }
  }
  return { count: rows.length, drifts }
}

type HoldRow = {
  job_id: string
  workspace_id: string
  status: string | null
  amount: number | null
  posted: number | null
  job_finished: boolean
  reserve: bigint
  settle: bigint
  release: bigint
  void: bigint
  expire: bigint
  settles: bigint
  foreign: bigint
}

/**
 * Every hold against its entries (the hold itself is the reservation; retired `reserve` rows are not read): nothing
 * while pending, a settle of the posted amount plus a release of the rest when posted, one void or expire of the
 * whole amount otherwise. Entries of a job with no hold, or in another workspace than the hold, are anomalies too.
 */
async function holdAnomalies(tx: Tx, ws: string | null) {
  const rows = await tx.$queryRaw<HoldRow[]>`
    WITH per_job AS (
      SELECT COALESCE(h.job_id, e.job_id) AS job_id, COALESCE(h.workspace_id, MIN(e.workspace_id)) AS workspace_id,
        h.status::text AS status, h.amount, h.posted,
        COALESCE(h.amount, 0)::bigint AS reserve,
        COALESCE(SUM(e.amount) FILTER (WHERE e.kind = 'settle'), 0)::bigint AS settle,
        COALESCE(SUM(e.amount) FILTER (WHERE e.kind = 'release'), 0)::bigint AS release,
        COALESCE(SUM(e.amount) FILTER (WHERE e.kind = 'void'), 0)::bigint AS void,
        COALESCE(SUM(e.amount) FILTER (WHERE e.kind = 'expire'), 0)::bigint AS expire,
        COUNT(e.id) FILTER (WHERE e.kind = 'settle')::bigint AS settles,
        COUNT(e.id) FILTER (WHERE e.workspace_id <> h.workspace_id)::bigint AS foreign
      FROM ledger_holds h
      FULL JOIN (SELECT * FROM ledger_entries WHERE kind <> 'reserve') e ON e.job_id = h.job_id
      WHERE (h.id IS NOT NULL OR e.job_id IS NOT NULL)
        AND (${ws}::text IS NULL OR h.workspace_id = ${ws}::text OR e.workspace_id = ${ws}::text)
      GROUP BY h.id, h.job_id, e.job_id, h.workspace_id, h.status, h.amount, h.posted
    )
    SELECT p.*, (p.status = 'pending' AND j.status IN ('completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled'))
                IS TRUE AS job_finished
    FROM per_job p LEFT JOIN jobs j ON j.id = p.job_id`
  let maxSettles = 0
  const anomalies: HoldAnomaly[] = []
  for (const r of rows) {
    maxSettles = Math.max(maxSettles, n(r.settles))
    const e = {
      reserve: n(r.reserve),
      settle: n(r.settle),
      release: n(r.release),
      void: n(r.void),
      expire: n(r.expire),
    }
    const amount = r.amount ?? -1
    const posted = r.posted ?? 0
    const expected =
      r.status === 'pending'
        ? { settle: 0, release: 0, void: 0, expire: 0 }
        : r.status === 'posted'
          ? { settle: posted, release: amount - posted, void: 0, expire: 0 }
          : r.status === 'voided'
            ? { settle: 0, release: 0, void: amount, expire: 0 }
            : r.status === 'expired'
              ? { settle: 0, release: 0, void: 0, expire: amount }
              : null
    const ok =
      expected !== null &&
      n(r.foreign) === 0 &&
      e.settle === expected.settle &&
      e.release === expected.release &&
      e.void === expected.void &&
      e.expire === expected.expire
    const reason: HoldAnomaly['reason'] | null =
      r.status === null
        ? 'entries_without_hold'
        : !ok
          ? 'entries_mismatch'
          : r.job_finished
            ? 'pending_after_job_finished'
            : null
    if (reason) {
      anomalies.push({
        reason,
        jobId: r.job_id,
        workspaceId: r.workspace_id,
        status: r.status,
        amount: r.amount,
        posted: r.posted,
        entries: e,
      })
    }
  }
  return { holds: rows.filter((r) => r.status !== null).length, anomalies, maxSettles }
}

/**
 * Recomputes every balance from the ledger's entries and from its holds, and checks each hold against its entries,
 * in one repeatable-read snapshot (concurrent traffic cannot show up as drift). `workspaceId` limits it to one.
 */
export async function reconcileLedger(db: Db, opts: { workspaceId?: string } = {}): Promise<ReconcileReport> {
  const ws = opts.workspaceId ?? null
  return db.$transaction(
    async (tx) => {
      const balances = await workspaceDrifts(tx, ws)
      const holds = await holdAnomalies(tx, ws)
      const [entries] = await tx.$queryRaw<{ n: bigint }[]>`
        SELECT (SELECT count(*) FROM ledger_entries
                WHERE kind <> 'reserve' AND (${ws}::text IS NULL OR workspace_id = ${ws}::text))
             + (SELECT count(*) FROM ledger_holds
                WHERE amount > 0 AND (${ws}::text IS NULL OR workspace_id = ${ws}::text)) AS n`
      return {
        workspaces: balances.count,
        holds: holds.holds,
        entries: n(entries?.n),
        driftCredits: balances.drifts.reduce((sum, d) => sum + Math.abs(d.stored - d.computed), 0),
        drifts: balances.drifts,
        holdAnomalies: holds.anomalies,
        maxSettlesPerJob: holds.maxSettles,
      }
    },
    { isolationLevel: 'RepeatableRead', timeout: 120_000, maxWait: 10_000 },
  )
}
