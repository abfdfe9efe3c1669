-- ledger_reserve_credits_batch: the reservations of several jobs on one workspace in one statement, one transaction
-- and one commit (CreditReserver in packages/ledger sends the reservations that arrive while one of the workspace's
-- is under way as one such call: group commit). Hand-written: `npm run db:reset-migration` regenerates only the init
-- migration, so keep this directory.
--
-- Why: a hot workspace's reservations run one at a time on its row, from the UPDATE to the end of the commit's WAL
-- flush, so its reservations per second are about 1 / (that time). One call per reservation pays that turn once per
-- job; a batch pays it once per batch. Measured (16 clients on one workspace, interleaved, 4 s rounds): one call per
-- reservation 0.61-0.67× the bare conditional UPDATE, batches 2.0-2.1×; without the advisory lock, one call per
-- reservation made the same 0.61-0.63×, so the turn on the row is the cost, not the queue in front of it.
--
-- Each job is decided on its own, in the order given, exactly as ledger_reserve_credits decides one (the same
-- statements): its hold and `reserve` entry go in first (a hold already there for the job, from an earlier call or an
-- earlier position of the same batch, makes its answer false and the caller's explanation finds the hold); then,
-- after the workspace's queue, one conditional UPDATE per job checks the balance and the spending cap of the current
-- UTC month against what the jobs before it left; a refused job's two rows are deleted again. The answer is one
-- boolean per job, in the order given. Nothing of a batch is visible before its commit, and an error rolls all of it
-- back (the caller then reserves each job alone). `p_now` (tests only) picks the month for the spending cap, as in
-- ledger_reserve_credits; NULL: PostgreSQL's clock.
CREATE FUNCTION ledger_reserve_credits_batch(
  p_workspace_id text,
  p_job_ids text[],
  p_hold_ids text[],
  p_amounts integer[],
  p_entry_ids text[],
  p_now timestamptz
) RETURNS boolean[]
LANGUAGE plpgsql AS $$
DECLARE
  v_period date := date_trunc('month', COALESCE(p_now, now()) AT TIME ZONE 'UTC')::date;
  v_at timestamp(3) := clock_timestamp() AT TIME ZONE 'UTC';
  v_count integer := COALESCE(array_length(p_job_ids, 1), 0);
  v_held boolean[] := array_fill(false, ARRAY[v_count]);
  v_any boolean := false;
BEGIN
  IF v_count = 0 THEN
    RETURN v_held;
  END IF;
  IF array_length(p_hold_ids, 1) IS DISTINCT FROM v_count OR array_length(p_amounts, 1) IS DISTINCT FROM v_count
     OR array_length(p_entry_ids, 1) IS DISTINCT FROM v_count THEN
    RAISE EXCEPTION 'ledger_reserve_credits_batch: the four arrays must have the same length';
  END IF;

  FOR i IN 1..v_count LOOP
    INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
    VALUES (p_hold_ids[i], p_workspace_id, p_job_ids[i], p_amounts[i], v_period, v_at)
    ON CONFLICT (id) DO NOTHING;
    v_held[i] := FOUND;
    IF FOUND THEN
      v_any := true;
      IF p_amounts[i] > 0 THEN
        INSERT INTO ledger_entries (id, workspace_id, job_id, kind, debit_account, credit_account, amount, created_at)
        VALUES (p_entry_ids[i], p_workspace_id, p_job_ids[i], 'reserve', 'available', 'reserved', p_amounts[i], v_at);
      END IF;
    END IF;
  END LOOP;
  IF NOT v_any THEN
    RETURN v_held;
  END IF;

  -- The workspace's queue, as in ledger_reserve_credits (and skipped for the same reason when this transaction
  -- already updated the row).
  IF NOT EXISTS (SELECT 1 FROM workspaces WHERE id = p_workspace_id AND xmin = pg_current_xact_id()::xid) THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_workspace_id, 7302452271548921));
  END IF;

  FOR i IN 1..v_count LOOP
    CONTINUE WHEN NOT v_held[i];
    UPDATE workspaces w SET
      credits_available = w.credits_available - p_amounts[i],
      credits_reserved = w.credits_reserved + p_amounts[i],
      spend_period_used = CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amounts[i],
      spend_period = v_period
    WHERE w.id = p_workspace_id
      AND w.credits_available >= p_amounts[i]
      AND (w.spending_cap IS NULL OR
           CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amounts[i] <= w.spending_cap);
    IF NOT FOUND THEN
      DELETE FROM ledger_entries WHERE id = p_entry_ids[i] AND job_id = p_job_ids[i] AND kind = 'reserve';
      DELETE FROM credit_holds WHERE id = p_hold_ids[i];
      v_held[i] := false;
    END IF;
  END LOOP;
  RETURN v_held;
END
$$;
