-- reserveCredits (packages/ledger) as one function call. Hand-written: `npm run db:reset-migration` regenerates only
-- the init migration, so keep this directory.
--
-- The body is what reserveCredits used to send as one data-modifying CTE; a call is still one statement, so the
-- balance columns, the hold and its `reserve` entry change together or not at all, and the UPDATE's WHERE clause is
-- still the check (balance, spending cap of the current UTC month, no hold for this job yet). Two things are faster:
--
-- * PL/pgSQL keeps the plans of its statements for the session: the client sends a short call instead of a large
--   statement that PostgreSQL parsed and planned again on every reservation.
-- * Reservations on one workspace queue on a transaction-level advisory lock (FIFO, one waiter woken per commit)
--   before the UPDATE, instead of all queueing on the workspace row: on a hot row every commit woke every waiter, each
--   re-read the newest row version (EvalPlanQual) and queued again. The lock only orders reservations; the UPDATE
--   decides as before, and writers that do not reserve (settle, void, grant) never take it. A transaction that has
--   already updated the workspace row skips it: it holds the row, and waiting behind a reservation that waits for
--   that row would be a deadlock. (Nothing locks workspaces rows without updating them; if something did before a
--   reservation in the same transaction, PostgreSQL's deadlock detector would abort one side, a retryable error.)
--   The lock key is the workspace id hashed to 64 bits with a seed of the ledger's own; two workspaces sharing a key
--   would only queue their reservations together.
CREATE FUNCTION ledger_reserve_credits(
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
  v_xid xid8 := pg_current_xact_id_if_assigned();
BEGIN
  IF v_xid IS NULL OR NOT EXISTS (
    SELECT 1 FROM workspaces WHERE id = p_workspace_id AND xmin = v_xid::xid
  ) THEN
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
         CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amount <= w.spending_cap)
    AND NOT EXISTS (SELECT 1 FROM credit_holds WHERE id = p_hold_id);
  IF NOT FOUND THEN
    RETURN false;
  END IF;

  INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
  VALUES (p_hold_id, p_workspace_id, p_job_id, p_amount, v_period, clock_timestamp() AT TIME ZONE 'UTC');
  IF p_amount > 0 THEN
    INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
    VALUES (p_entry_id, p_workspace_id, p_job_id, 'reserve', 'available', 'reserved', p_amount,
            clock_timestamp() AT TIME ZONE 'UTC');
  END IF;
  RETURN true;
END
$$;
