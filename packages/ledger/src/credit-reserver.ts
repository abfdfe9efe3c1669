import { GroupCommit, type RawSql } from '@quire/db'
import { holdIdFor } from '@quire/domain'
import { assertAmount, explainReservationRefusal, type ReserveResult, reserveCredits } from './ledger.ts'

type Reservation = { workspaceId: string; jobId: string; amount: number; now?: Date }
/** What `ledger_reserve_credits_batch` answers for each job (migration `*_ledger_reserve_hold_any_conflict`). */
const BATCH_ANSWERS = ['held', 'insufficient_credits', 'spending_cap', 'exists', 'missing'] as const
type BatchAnswer = (typeof BATCH_ANSWERS)[number]
const isBatchAnswer = (a: unknown): a is BatchAnswer => (BATCH_ANSWERS as readonly unknown[]).includes(a)
/**
 * Reservations of callers that reserve on their own (autocommit, not inside a transaction of theirs), grouped per
 * workspace (GroupCommit): the first reservation of a workspace goes at once; those that arrive while it is under way
 * wait for it and then go together as one call of `ledger_reserve_credits_batch` (migrations
 * `*_ledger_reserve_credits_batch`, `*_ledger_reserve_hold_any_conflict`), one transaction and one commit for all of
 * them. A hot workspace's reservations run one at a time on its row, so each turn on the row (the UPDATE, the commit
 * and its WAL flush) now serves a batch instead of one job. A reservation alone on its workspace waits for nothing.
 *
 * Each job is still decided on its own, exactly as reserveCredits decides it: the balance and the spending cap
 * checked by its own conditional UPDATE after the jobs ahead of it, a refusal explained, a job reserved twice held
 * once. A caller's promise settles only after its batch committed (or failed); a batch that fails as a whole is
 * reserved again one call each, so no job's error becomes another's.
 *
 * `sql` must be autocommit (a client or pool, e.g. `directSql(db)`): in a caller's transaction use reserveCredits.
 */
export class CreditReserver {
  private readonly batches: GroupCommit<Reservation, ReserveResult>

  constructor(
    private readonly sql: RawSql,
    opts: { maxBatch?: number } = {},
  ) {
    this.batches = new GroupCommit(
      {
        writeGroup: (batch) => this.reserveBatch(batch),
        // One job: reserveCredits itself, the single-job function whose plan the session already keeps.
        writeOne: (r) => reserveCredits(this.sql, r),
      },
      opts.maxBatch, // unset: GroupCommit's own cap (a batch holds its workspace's row for all of it)
    )
  }

  /**
   * Places a hold of `amount` credits for a job; the same answers as reserveCredits. `now` (tests only) picks the
   * month for the spending cap; reservations with different ones go in different batches.
   */
  reserve(reservation: Reservation): Promise<ReserveResult> {
    assertAmount(reservation.amount)
    return this.batches.write(`${reservation.workspaceId}\n${reservation.now?.toISOString() ?? ''}`, reservation)
  }

  /** Each job's result, from one call for the batch. */
  private async reserveBatch(batch: Reservation[]): Promise<Array<ReserveResult | Promise<ReserveResult>>> {
    const answers = await this.callBatch(batch)
    return batch.map((r, i) => {
      const answer = answers[i]!
      if (answer === 'held') return { ok: true, holdId: holdIdFor(r.jobId) }
      // Decided inside the batch, against what the jobs before it left (a read after the commit would also see
      // what the jobs after it took).
      if (answer === 'insufficient_credits' || answer === 'spending_cap') return { ok: false, reason: answer }
      // A hold already there, or no such workspace: the explanation finds the hold or reports the workspace missing;
      // a read after the commit, it need not hold up the next batch.
      return explainReservationRefusal(this.sql, r)
    })
  }

  /** One call for the batch (all of one workspace and one `now`): each job's answer, in the batch's order. */
  private async callBatch(batch: Reservation[]): Promise<BatchAnswer[]> {
    const { workspaceId, now } = batch[0]!
    const rows = await this.sql.$queryRaw<{ held: string[] }[]>`
      SELECT ledger_reserve_credits_batch(${workspaceId}, ${batch.map((r) => r.jobId)}::text[],
                                          ${batch.map((r) => holdIdFor(r.jobId))}::text[],
                                          ${batch.map((r) => r.amount)}::int[],
                                          NULL::text[], -- p_entry_ids, retired: the hold records the reservation
                                          ${now?.toISOString() ?? null}::timestamptz) AS held`
    const answers = rows[0]?.held
    if (!Array.isArray(answers) || answers.length !== batch.length || !answers.every(isBatchAnswer))
      throw new Error('ledger_reserve_credits_batch: bad answer')
    return answers
  }
}
