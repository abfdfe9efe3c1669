import { holdIdFor, newId } from '@quire/domain'
import type { Tx } from '@quire/db'

export type LedgerEntryKind = 'grant' | 'reserve' | 'settle' | 'release' | 'void' | 'expire'

export type ReserveResult = { ok: true; holdId: string } | { ok: false; reason: 'insufficient_credits' | 'spending_cap' }

export type Balance = { available: number; reserved: number; spent: number; spending_cap: number | null }

async function entry(tx: Tx, workspaceId: string, kind: LedgerEntryKind, amount: number, jobId: string | null) {
  await tx.ledgerEntry.create({ data: { id: newId('led'), workspaceId, jobId, kind, amount } })
}

function assertAmount(amount: number) {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error(`ledger amounts are non-negative integers: ${amount}`)
}

/**
 * Places a hold of `amount` credits for a job. The workspace row is locked first so the spending-cap sum and the
 * balance check see every committed hold; the balance check itself is the UPDATE's WHERE clause, never a read in
 * the app followed by a write.
 */
export async function reserveCredits(
  tx: Tx,
  opts: { workspaceId: string; jobId: string; amount: number; now?: Date },
): Promise<ReserveResult> {
  assertAmount(opts.amount)
  const holdId = holdIdFor(opts.jobId)
  const locked = await tx.$queryRaw<{ spending_cap: number | null }[]>`
    SELECT spending_cap FROM workspaces WHERE id = ${opts.workspaceId} FOR UPDATE`
  const cap = locked[0]?.spending_cap ?? null
  if (cap !== null) {
    const monthStart = startOfUtcMonth(opts.now ?? new Date())
    const used = await tx.$queryRaw<{ used: bigint | null }[]>`
      SELECT COALESCE(SUM(CASE status WHEN 'pending' THEN amount WHEN 'posted' THEN posted ELSE 0 END), 0) AS used
      FROM credit_holds WHERE workspace_id = ${opts.workspaceId} AND created_at >= ${monthStart}`
    if (Number(used[0]?.used ?? 0) + opts.amount > cap) return { ok: false, reason: 'spending_cap' }
  }
  const updated = await tx.$executeRaw`
    UPDATE workspaces SET credits_available = credits_available - ${opts.amount},
                          credits_reserved = credits_reserved + ${opts.amount}
    WHERE id = ${opts.workspaceId} AND credits_available >= ${opts.amount}`
  if (updated !== 1) return { ok: false, reason: 'insufficient_credits' }
  await tx.creditHold.create({
    data: { id: holdId, workspaceId: opts.workspaceId, jobId: opts.jobId, amount: opts.amount },
  })
  await entry(tx, opts.workspaceId, 'reserve', opts.amount, opts.jobId)
  return { ok: true, holdId }
}

type HoldRow = { id: string; workspace_id: string; amount: number; status: string }

async function lockPendingHold(tx: Tx, jobId: string): Promise<HoldRow | null> {
  const rows = await tx.$queryRaw<HoldRow[]>`
    SELECT id, workspace_id, amount, status::text AS status FROM credit_holds WHERE job_id = ${jobId} FOR UPDATE`
  const hold = rows[0]
  return hold && hold.status === 'pending' ? hold : null
}

/**
 * Posts a job's hold for what it used (never more than held) and releases the rest. A second call finds the hold
 * already posted and does nothing, so a retried stage or a worker that died mid-settlement never double-charges.
 */
export async function settleCredits(tx: Tx, opts: { jobId: string; used: number }): Promise<{ posted: number } | null> {
  assertAmount(opts.used)
  const hold = await lockPendingHold(tx, opts.jobId)
  if (!hold) return null
  const posted = Math.min(opts.used, hold.amount)
  const released = hold.amount - posted
  await tx.$executeRaw`
    UPDATE workspaces SET credits_reserved = credits_reserved - ${hold.amount},
                          credits_spent = credits_spent + ${posted},
                          credits_available = credits_available + ${released}
    WHERE id = ${hold.workspace_id}`
  await tx.creditHold.update({
    where: { id: hold.id },
    data: { status: 'posted', posted, resolvedAt: new Date() },
  })
  if (posted > 0) await entry(tx, hold.workspace_id, 'settle', posted, opts.jobId)
  if (released > 0) await entry(tx, hold.workspace_id, 'release', released, opts.jobId)
  return { posted }
}

/** Releases a whole hold (job failed or cancelled, or its hold expired). Idempotent like settlement. */
export async function voidCredits(
  tx: Tx,
  opts: { jobId: string; reason?: 'void' | 'expire' },
): Promise<{ released: number } | null> {
  const hold = await lockPendingHold(tx, opts.jobId)
  if (!hold) return null
  const kind = opts.reason ?? 'void'
  await tx.$executeRaw`
    UPDATE workspaces SET credits_reserved = credits_reserved - ${hold.amount},
                          credits_available = credits_available + ${hold.amount}
    WHERE id = ${hold.workspace_id}`
  await tx.creditHold.update({
    where: { id: hold.id },
    data: { status: kind === 'void' ? 'voided' : 'expired', posted: 0, resolvedAt: new Date() },
  })
  await entry(tx, hold.workspace_id, kind, hold.amount, opts.jobId)
  return { released: hold.amount }
}

export async function grantCredits(tx: Tx, opts: { workspaceId: string; amount: number }): Promise<Balance> {
  assertAmount(opts.amount)
  await tx.$executeRaw`
    UPDATE workspaces SET credits_available = credits_available + ${opts.amount} WHERE id = ${opts.workspaceId}`
  await entry(tx, opts.workspaceId, 'grant', opts.amount, null)
  return getBalance(tx, opts.workspaceId)
}

export async function getBalance(tx: Pick<Tx, 'workspace'>, workspaceId: string): Promise<Balance> {
  const ws = await tx.workspace.findUniqueOrThrow({ where: { id: workspaceId } })
  return {
    available: ws.creditsAvailable,
    reserved: ws.creditsReserved,
    spent: ws.creditsSpent,
    spending_cap: ws.spendingCap,
  }
}

function startOfUtcMonth(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
}
