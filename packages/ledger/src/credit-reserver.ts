import type { RawSql } from '@quire/db'
import { holdIdFor, newId } from '@quire/domain'
import { assertAmount, explainReservationRefusal, type ReserveResult, reserveCredits } from './ledger.ts'

type Reservation = { workspaceId: string; jobId: string; amount: number; now?: Date }
/** What `ledger_reserve_credits_batch` answers for each job (migration `*_ledger_reserve_hold_any_conflict`). */
const BATCH_ANSWERS = ['held', 'insufficient_credits', 'spending_cap', 'exists', 'missing'] as const
type BatchAnswer = (typeof BATCH_ANSWERS)[number]
const isBatchAnswer = (a: unknown): a is BatchAnswer => (BATCH_ANSWERS as readonly unknown[]).includes(a)
type Waiting = Reservation & { resolve(result: ReserveResult): void; reject(error: unknown): void }

/** Most reservations one call carries: a batch holds its workspace's row for all of them. */
const DEFAULT_MAX_BATCH = 64

/**
 * Reservations of callers that reserve on their own (autocommit, not inside a transaction of theirs), grouped per
 * workspace: the first reservation of a workspace goes at once; those that arrive while it is under way wait for it
 * and then go together as one call of `ledger_reserve_credits_batch` (migrations `*_ledger_reserve_credits_batch`,
 * `*_ledger_reserve_hold_any_conflict`),
 * one transaction and one commit for all of them, and so on while more arrive. This is group commit, as a
 * TigerBeetle client batches the transfers its callers send at once: a hot workspace's reservations run one at a
 * time on its row, so each turn on the row (the UPDATE, the commit and its WAL flush) now serves a batch instead of
 * one job. A reservation alone on its workspace waits for nothing.
 *
 * Each job is still decided on its own, exactly as reserveCredits decides it: the balance and the spending cap
 * checked by its own conditional UPDATE after the jobs ahead of it, a refusal explained, a job reserved twice held
 * once. A caller's promise settles only after its batch committed (or failed). A batch that fails as a whole (a
 * connection lost, a statement timeout) rolls back entirely and its jobs are reserved again one call each, so no
 * job's error becomes another's.
 *
 * `sql` must be autocommit (a client or pool, e.g. `directSql(db)`): in a caller's transaction use reserveCredits.
 */
export class CreditReserver {
  private readonly waiting = new Map<string, Waiting[]>()
  private readonly maxBatch: number

  constructor(
    private readonly sql: RawSql,
    opts: { maxBatch?: number } = {},
  ) {
    this.maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH
  }

  /**
   * Places a hold of `amount` credits for a job; the same answers as reserveCredits. `now` (tests only) picks the
   * month for the spending cap; reservations with different ones go in different batches.
   */
  reserve(reservation: Reservation): Promise<ReserveResult> {
    assertAmount(reservation.amount)
    const group = `${reservation.workspaceId}\n${reservation.now?.toISOString() ?? ''}`
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(group)
      const entry = { ...reservation, resolve, reject }
      if (queue) {
        queue.push(entry) // the workspace has a batch under way: this goes with the next one
        return
      }
      this.waiting.set(group, [entry])
      void this.drain(group)
    })
  }

  /** Sends a group's waiting reservations, a batch at a time, until none are left. Never rejects. */
  private async drain(group: string): Promise<void> {
    const queue = this.waiting.get(group)!
    while (queue.length > 0) await this.send(queue.splice(0, this.maxBatch))
    this.waiting.delete(group)
  }

  private async send(batch: Waiting[]): Promise<void> {
    const alone = (r: Waiting) => reserveCredits(this.sql, r).then(r.resolve, r.reject)
    // One job: reserveCredits itself, the single-job function whose plan the session already keeps.
    if (batch.length === 1) return alone(batch[0]!)
    let answers: BatchAnswer[]
    try {
      answers = await this.callBatch(batch)
    } catch {
      // Nothing of the batch remains: each job goes again alone, so a job's own error stays its own.
      await Promise.all(batch.map(alone))
      return
    }
    for (const [i, r] of batch.entries()) {
      const answer = answers[i]!
      if (answer === 'held') r.resolve({ ok: true, holdId: holdIdFor(r.jobId) })
      // Decided inside the batch, against what the jobs before it left (a read after the commit would also see
      // what the jobs after it took).
      else if (answer === 'insufficient_credits' || answer === 'spending_cap') r.resolve({ ok: false, reason: answer })
      // A hold already there, or no such workspace: the explanation finds the hold or reports the workspace missing;
      // a read after the commit, it need not hold up the next batch.
      else explainReservationRefusal(this.sql, r).then(r.resolve, r.reject)
    }
  }

  /** One call for the batch (all of one workspace and one `now`): each job's answer, in the batch's order. */
  private async callBatch(batch: Waiting[]): Promise<BatchAnswer[]> {
    const { workspaceId, now } = batch[0]!
    const rows = await this.sql.$queryRaw<{ held: string[] }[]>`
      SELECT ledger_reserve_credits_batch(${workspaceId}, ${batch.map((r) => r.jobId)}::text[],
                                          ${batch.map((r) => holdIdFor(r.jobId))}::text[],
                                          ${batch.map((r) => r.amount)}::int[],
                                          ${batch.map(() => newId('led'))}::text[],
                                          ${now?.toISOString() ?? null}::timestamptz) AS held`
    const answers = rows[0]?.held
    if (!Array.isArray(answers) || answers.length !== batch.length || !answers.every(isBatchAnswer))
      throw new Error('ledger_reserve_credits_batch: bad answer')
    return answers
  }
}
