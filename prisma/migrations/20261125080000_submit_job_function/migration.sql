-- A submission as one statement (createJob in packages/core). Hand-written: `npm run db:reset-migration` regenerates
-- only the init migration, so keep this directory.
--
-- `submit_job` writes what the interactive transaction used to write in four statements between BEGIN and COMMIT:
-- the job with its files and `source` stage run, the `stage.exited` event (and its fan-out outbox row when the
-- workspace has a webhook, the rule recordEvents follows), the outbox row of the first stage, and last the credit
-- reservation (ledger_reserve_credits), so the workspace row is locked for the shortest time. A refusal raises
-- SQLSTATE QR402 and the whole call rolls back: no credits, no job. One call is one round trip in autocommit, with
-- its plans kept for the session.
--
-- The rows come as JSON objects keyed by column name, every column given: jsonb_populate_record reads them into the
-- table's row type (text to enum, ISO strings to timestamp(3), JSON null to NULL). Outbox rows omit the id (a
-- sequence). The job's pipeline definition comes apart (p_definition): the API keeps each version's JSON made once.
--
-- The first stage's outbox row is sent to BullMQ by the submitting process right after the commit, so it carries
-- `dispatch_after`: the relay leaves a row alone until then (no second send while the producer's own send and mark
-- are under way) and takes it over after, the safety net when the producer died before it could send.
ALTER TABLE "outbox" ADD COLUMN "dispatch_after" TIMESTAMP(3);

CREATE FUNCTION submit_job(
  p_job jsonb,
  p_definition jsonb,
  p_files jsonb,
  p_source_run jsonb,
  p_event jsonb,
  p_fanout_row jsonb,
  p_stage_row jsonb,
  p_direct_grace_ms integer,
  p_notify_channel text,
  p_hold_id text,
  p_entry_id text
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_workspace_id text := p_job->>'workspace_id';
  v_job_id text := p_job->>'id';
  v_owed boolean;
  v_stage_row_id bigint;
BEGIN
  INSERT INTO jobs SELECT * FROM jsonb_populate_record(NULL::jobs, p_job || jsonb_build_object('definition', p_definition));
  INSERT INTO job_files SELECT * FROM jsonb_populate_recordset(NULL::job_files, p_files);
  INSERT INTO stage_runs SELECT * FROM jsonb_populate_record(NULL::stage_runs, p_source_run);

  v_owed := EXISTS (SELECT 1 FROM webhooks WHERE workspace_id = v_workspace_id);
  INSERT INTO events
  SELECT * FROM jsonb_populate_record(NULL::events,
    p_event || jsonb_build_object('fanned_out_at', CASE WHEN v_owed THEN NULL ELSE p_event->'created_at' END));
  IF v_owed THEN
    INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at)
    SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, o.created_at
    FROM jsonb_populate_record(NULL::outbox, p_fanout_row) AS o;
    PERFORM pg_notify(p_notify_channel, p_fanout_row->>'queue');
  END IF;

  INSERT INTO outbox (queue, name, job_key, payload, priority, delay_ms, replace_finished, created_at, dispatch_after)
  SELECT o.queue, o.name, o.job_key, o.payload, o.priority, o.delay_ms, o.replace_finished, o.created_at,
         (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => p_direct_grace_ms / 1000.0)
  FROM jsonb_populate_record(NULL::outbox, p_stage_row) AS o
  RETURNING id INTO v_stage_row_id;

  IF NOT ledger_reserve_credits(v_workspace_id, v_job_id, p_hold_id, (p_job->>'credits_reserved')::integer, NULL,
                                p_entry_id) THEN
    RAISE EXCEPTION USING ERRCODE = 'QR402', MESSAGE = 'credit reservation refused for job ' || v_job_id;
  END IF;
  RETURN v_stage_row_id;
END
$$;
