-- A submission confirms its API key in its own statement. Hand-written: `npm run db:reset-migration` regenerates only
-- the init migration, so keep this directory.
--
-- `api_key_principal` is the API key check every authenticated request runs (authenticateApiKey in packages/core):
-- the key's principal (its workspace and form, scopes, bound pipeline, the workspace default and the pipeline version
-- a submission naming none runs) with a fingerprint, an md5 of all of those. As a SQL function of one SELECT it is
-- inlined into the statement that calls it.
--
-- `submit_job` takes three more arguments: a key hash, the fingerprint its principal had when the API read it, and
-- the platform pipeline's id. With a key hash given it first checks that the key still has that principal (not
-- revoked, no other default pipeline, no newer published version) and raises SQLSTATE QR401 otherwise, before any
-- row is written. So the API may serve a submission under a principal it read on an earlier request (one statement
-- per submission instead of two), and a revocation or a change still holds from the next request on: the
-- submission that meets it is served again under the principal read afresh. With a null key hash there is no check.
-- The rest of the function is the 11-argument one's (migration `20261125080000_submit_job_function`).

CREATE FUNCTION api_key_principal(p_key_hash text, p_platform_pipeline_id text)
RETURNS TABLE (
  id text,
  workspace_id text,
  api_form text,
  scopes text[],
  pipeline_id text,
  default_pipeline_id text,
  run_pipeline_id text,
  run_version integer,
  fingerprint text
)
LANGUAGE sql STABLE AS $$
  SELECT k.id, k.workspace_id, w.api_form::text, k.scopes, k.pipeline_id, w.default_pipeline_id,
         run.pipeline_id, run.version,
         md5(ROW(k.id, k.workspace_id, w.api_form::text, k.scopes, k.pipeline_id, w.default_pipeline_id,
                 run.pipeline_id, run.version)::text)
  FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
  LEFT JOIN LATERAL (
    SELECT v.pipeline_id, v.version FROM pipelines p JOIN pipeline_versions v ON v.pipeline_id = p.id
    WHERE p.id = COALESCE(k.pipeline_id, w.default_pipeline_id, p_platform_pipeline_id)
      AND (p.workspace_id = k.workspace_id OR p.workspace_id IS NULL) AND v.published_at IS NOT NULL
    ORDER BY v.version DESC LIMIT 1
  ) run ON true
  WHERE k.key_hash = p_key_hash AND k.revoked_at IS NULL
$$;

-- A new overload: the 11-argument submit_job stays as it was, for API processes started before this migration
-- during a rolling upgrade (a later migration drops it).
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
  p_entry_id text,
  p_key_hash text,
  p_key_fingerprint text,
  p_platform_pipeline_id text
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_workspace_id text := p_job->>'workspace_id';
  v_job_id text := p_job->>'id';
  v_owed boolean;
  v_stage_row_id bigint;
BEGIN
  IF p_key_hash IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM api_key_principal(p_key_hash, p_platform_pipeline_id) k WHERE k.fingerprint = p_key_fingerprint
  ) THEN
    RAISE EXCEPTION USING ERRCODE = 'QR401', MESSAGE = 'the API key no longer has the principal the request was served under';
  END IF;

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
