-- A batch reservation moves the spending period as a single one does, also for a hold of 0 credits. Hand-written:
-- `npm run db:reset-migration` regenerates only the init migration, so keep this directory.
--
-- `ledger_reserve_credits` updates the workspace row for every hold it makes, a hold of 0 credits included, and so
-- moves `spend_period` to the hold's month. `ledger_reserve_credits_batch` (migration
-- `*_ledger_reserve_batch_one_update`) updated the row only when the held total was above zero: a group of only
-- 0-credit jobs in a new month left the row's period on the old month. The row is now updated whenever a job of the
-- group was held. The pending holds are one array: a position is decided once and its hold taken out, so the same
-- hold again answers `exists`.
-- Answers, order, reasons and the signature are unchanged.

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
  v_answer text[] := array_fill('exists'::text, ARRAY[v_count]);
  v_pending text[];
  v_refused text[] := '{}';
  v_available bigint;
  v_cap bigint;
  v_used bigint;
  v_total bigint := 0;
  v_held boolean := false;
BEGIN
  IF v_count = 0 THEN
    RETURN v_answer;
  END IF;
  IF array_length(p_hold_ids, 1) IS DISTINCT FROM v_count OR array_length(p_amounts, 1) IS DISTINCT FROM v_count THEN
    RAISE EXCEPTION 'ledger_reserve_credits_batch: the job, hold and amount arrays must have the same length';
  END IF;

  WITH inserted AS (
    INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
    SELECT h.id, p_workspace_id, h.job_id, h.amount, v_period, v_at
    FROM unnest(p_hold_ids, p_job_ids, p_amounts) AS h(id, job_id, amount)
    ON CONFLICT DO NOTHING
    RETURNING id)
  SELECT array_agg(id) INTO v_pending FROM inserted;
  IF v_pending IS NULL THEN
    RETURN v_answer;
  END IF;

  -- The workspace's queue, as in ledger_reserve_credits (and skipped for the same reason when this transaction
  -- already updated the row).
  IF NOT EXISTS (SELECT 1 FROM workspaces WHERE id = p_workspace_id AND xmin = pg_current_xact_id()::xid) THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_workspace_id, 7302452271548921));
  END IF;

  SELECT w.credits_available, w.spending_cap,
         CASE WHEN w.spend_period = v_period THEN w.spend_period_used ELSE 0 END
    INTO v_available, v_cap, v_used
    FROM workspaces w WHERE w.id = p_workspace_id
    FOR NO KEY UPDATE;

  FOR i IN 1..v_count LOOP
    -- A hold sent twice in the batch was inserted once: its first position is decided, the others answer `exists`.
    CONTINUE WHEN NOT (p_hold_ids[i] = ANY (v_pending));
    v_pending := array_remove(v_pending, p_hold_ids[i]);
    IF v_available IS NULL THEN
      v_answer[i] := 'missing';
    ELSIF v_available < p_amounts[i] THEN
      v_answer[i] := 'insufficient_credits';
    ELSIF v_cap IS NOT NULL AND v_used + p_amounts[i] > v_cap THEN
      v_answer[i] := 'spending_cap';
    ELSE
      v_answer[i] := 'held';
      v_available := v_available - p_amounts[i];
      v_used := v_used + p_amounts[i];
      v_total := v_total + p_amounts[i];
      v_held := true;
      CONTINUE;
    END IF;
    v_refused := v_refused || p_hold_ids[i];
  END LOOP;

  IF v_held THEN
    UPDATE workspaces w SET
      credits_available = w.credits_available - v_total,
      credits_reserved = w.credits_reserved + v_total,
      spend_period_used = v_used,
      spend_period = v_period
    WHERE w.id = p_workspace_id;
  END IF;
  IF cardinality(v_refused) > 0 THEN
    DELETE FROM credit_holds WHERE id = ANY (v_refused);
  END IF;
  RETURN v_answer;
END
$$;
