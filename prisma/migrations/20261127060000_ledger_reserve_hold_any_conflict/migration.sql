-- A reservation's hold goes in with ON CONFLICT DO NOTHING on every unique index of credit_holds, not only its
-- primary key. Hand-written: `npm run db:reset-migration` regenerates only the init migration, so keep this directory.
--
-- The hold of a job has two unique keys, its id (hold_<job id>) and its job_id. `ON CONFLICT (id)` made only the
-- first an arbiter: when two reservations of the same job raced, the second could meet the first's uncommitted row
-- in the job_id index before the id index, wait for its commit there and then fail with a unique violation
-- (credit_holds_job_id_key) instead of answering false; seen once in CI under load ("a job raced twice"). Without a
-- conflict target every unique index is an arbiter, and a job's second reservation answers false whichever index it
-- meets first, as the functions say. Nothing else changes in ledger_reserve_credits; the batch function also answers
-- each job's refusal with its reason (below).

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
  ON CONFLICT DO NOTHING;
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

-- ledger_reserve_credits_batch answers each job with a word instead of a boolean: `held`; `insufficient_credits` or
-- `spending_cap`, decided when the job's UPDATE found no row, against the balance the jobs before it left (read
-- after the commit, a refusal's reason could name what a later job of the same batch did: a job refused by the cap
-- was explained as short of credits once a later, smaller job had taken some); `exists` (the job already had a hold:
-- the caller's explanation finds it); `missing` (no such workspace). Same statements otherwise.
DROP FUNCTION ledger_reserve_credits_batch(text, text[], text[], integer[], text[], timestamptz);

CREATE FUNCTION ledger_reserve_credits_batch(
  p_workspace_id text,
  p_job_ids text[],
  p_hold_ids text[],
  p_amounts integer[],
  p_entry_ids text[],
  p_now timestamptz
) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_period date := date_trunc('month', COALESCE(p_now, now()) AT TIME ZONE 'UTC')::date;
  v_at timestamp(3) := clock_timestamp() AT TIME ZONE 'UTC';
  v_count integer := COALESCE(array_length(p_job_ids, 1), 0);
  v_held boolean[] := array_fill(false, ARRAY[v_count]);
  v_answer text[] := array_fill('exists'::text, ARRAY[v_count]);
  v_reason text;
  v_any boolean := false;
BEGIN
  IF v_count = 0 THEN
    RETURN v_answer;
  END IF;
  IF array_length(p_hold_ids, 1) IS DISTINCT FROM v_count OR array_length(p_amounts, 1) IS DISTINCT FROM v_count
     OR array_length(p_entry_ids, 1) IS DISTINCT FROM v_count THEN
    RAISE EXCEPTION 'ledger_reserve_credits_batch: the four arrays must have the same length';
  END IF;

  FOR i IN 1..v_count LOOP
    INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
    VALUES (p_hold_ids[i], p_workspace_id, p_job_ids[i], p_amounts[i], v_period, v_at)
    ON CONFLICT DO NOTHING;
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
    RETURN v_answer;
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
    IF FOUND THEN
      v_answer[i] := 'held';
    ELSE
      DELETE FROM ledger_entries WHERE id = p_entry_ids[i] AND job_id = p_job_ids[i] AND kind = 'reserve';
      DELETE FROM credit_holds WHERE id = p_hold_ids[i];
      v_held[i] := false;
      -- Why, read here and now: after the jobs before it and before those after it, which the caller could not
      -- tell apart once the batch has committed. No row: the workspace is missing.
      SELECT CASE
               WHEN w.credits_available < p_amounts[i] THEN 'insufficient_credits'
               WHEN w.spending_cap IS NOT NULL AND
                    CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END + p_amounts[i]
                      > w.spending_cap THEN 'spending_cap'
               ELSE 'insufficient_credits'
             END
        INTO v_reason
        FROM workspaces w WHERE w.id = p_workspace_id;
      v_answer[i] := CASE WHEN FOUND THEN v_reason ELSE 'missing' END;
    END IF;
  END LOOP;
  RETURN v_answer;
END
$$;
