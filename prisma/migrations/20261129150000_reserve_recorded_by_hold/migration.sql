-- A reservation is recorded once, by its hold. Hand-written: `npm run db:reset-migration` regenerates only the init
-- migration, so keep this directory.
--
-- A hold is the pending transfer of TigerBeetle's two-phase model: it names the workspace, the job, the amount and
-- the moment, and moves that amount from `available` to `reserved` as a transfer does. Each reservation also wrote a
-- `reserve` row into ledger_entries saying the same again: a second row, three index entries, a CHECK and a foreign
-- key on every submission's path. From here the hold alone records the reservation: the reconciliation counts every
-- hold as its available -> reserved movement, and the ledger's listing shows each hold of a positive amount as its
-- `reserve` entry (id `hold_<job id>`). The posts, voids, expiries and grants stay entries as before.
--
-- The functions keep their signatures, so callers of the previous release go on working during a rolling upgrade;
-- `p_entry_id` / `p_entry_ids` are no longer read. `reserve` rows written before this migration (or by a process of
-- the previous release while it rolls out) stay where they are and are read by nothing: the hold written beside
-- each of them in the same statement records the same reservation.

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

  -- The queue (see 20261125060000), skipped by a transaction that already updated the workspace row: it holds the
  -- row, and waiting behind a reservation that waits for that row would be a deadlock. The insert above assigned
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
    DELETE FROM credit_holds WHERE id = p_hold_id;
    RETURN false;
  END IF;
  RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION ledger_reserve_credits_batch(
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
  IF array_length(p_hold_ids, 1) IS DISTINCT FROM v_count OR array_length(p_amounts, 1) IS DISTINCT FROM v_count THEN
    RAISE EXCEPTION 'ledger_reserve_credits_batch: the job, hold and amount arrays must have the same length';
  END IF;

  FOR i IN 1..v_count LOOP
    INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
    VALUES (p_hold_ids[i], p_workspace_id, p_job_ids[i], p_amounts[i], v_period, v_at)
    ON CONFLICT DO NOTHING;
    v_held[i] := FOUND;
    v_any := v_any OR v_held[i];
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
