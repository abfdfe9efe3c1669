-- ledger_reserve_credits writes the hold and its `reserve` entry before it queues on the workspace, so a reservation
-- holds the workspace row (and the queue) only for the UPDATE and the commit. Hand-written: `npm run db:reset-migration`
-- regenerates only the init migration, so keep this directory. Same signature and semantics as in
-- `20261125060000_ledger_reserve_function`: one call changes the balance columns, the hold and its entry together or
-- not at all, and the UPDATE's WHERE clause is still the check (balance, spending cap of the current UTC month).
--
-- Reservations of one hot workspace run one at a time (the advisory lock, then the row), so whatever a reservation
-- does while it holds them bounds the workspace's reservations per second. The two inserts (a heap row and index
-- entries each, in credit_holds and ledger_entries) used to run there; now they run first, at the same time as the
-- other reservations' UPDATEs:
--
-- * The hold goes in first with ON CONFLICT (id) DO NOTHING: a hold already there for the job (a repeated or racing
--   reservation of the same job; the racer's insert waits for the first one's commit) makes the call return false, as
--   the UPDATE's `NOT EXISTS` used to, and reserveCredits' explanation finds the hold.
-- * When the UPDATE then matches no row (balance, cap, missing workspace), the call deletes the two rows it inserted
--   and returns false: nothing of it remains, in autocommit or in the caller's transaction.
-- * The foreign keys of both tables to workspaces are checked at commit (DEFERRABLE INITIALLY DEFERRED) instead of
--   after each insert. Checked at once, the insert's FOR KEY SHARE lock on the workspace row would meet the UPDATE
--   lock of the reservation under way on that same row and turn its xmax into a MultiXact on every reservation; at
--   commit the row is this transaction's own. The constraint is the same (a row of a missing workspace fails the
--   commit with the same SQLSTATE 23503), and ON DELETE CASCADE still acts at once (referential actions are never
--   deferred). A reservation reaches the check only after its UPDATE found the workspace row.
ALTER TABLE "credit_holds" ALTER CONSTRAINT "credit_holds_workspace_id_fkey" DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE "ledger_entries" ALTER CONSTRAINT "ledger_entries_workspace_id_fkey" DEFERRABLE INITIALLY DEFERRED;

CREATE OR REPLACE FUNCTION ledger_reserve_credits(
  p_workspace_id text,
  p_job_id text,
  p_hold_id text,
  p_amount integer,
  p_now timestamptz,
  p_entry_id text
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_period date := date_trunc('month', COALESCE(p_now, now()) AT TIME ZONE 'UTC')::date;
  v_at timestamp(3) := clock_timestamp() AT TIME ZONE 'UTC';
BEGIN
  INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
  VALUES (p_hold_id, p_workspace_id, p_job_id, p_amount, v_period, v_at)
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF p_amount > 0 THEN
    INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
    VALUES (p_entry_id, p_workspace_id, p_job_id, 'reserve', 'available', 'reserved', p_amount, v_at);
  END IF;

  -- The queue (see 20261125060000), skipped by a transaction that already updated the workspace row: it holds the
  -- row, and waiting behind a reservation that waits for that row would be a deadlock. The inserts above assigned
  -- this transaction its id.
  IF NOT EXISTS (SELECT 1 FROM workspaces WHERE id = p_workspace_id AND xmin = pg_current_xact_id()::xid) THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_workspace_id, 7302452271548921));
  END IF;

  UPDATE workspaces w SET
    credits_available = w.credits_available - p_amount,
    credits_reserved = w.credits_reserved + p_amount,
    spend_period_used = CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amount,
    spend_period = v_period
  WHERE w.id = p_workspace_id
    AND w.credits_available >= p_amount
    AND (w.spending_cap IS NULL OR
         CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amount <= w.spending_cap);
  IF NOT FOUND THEN
    DELETE FROM ledger_entries WHERE id = p_entry_id AND job_id = p_job_id AND kind = 'reserve';
    DELETE FROM credit_holds WHERE id = p_hold_id;
    RETURN false;
  END IF;
  RETURN true;
END
$$;
