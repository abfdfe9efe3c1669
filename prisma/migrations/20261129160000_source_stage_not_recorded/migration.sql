-- A submission no longer writes a `source` stage run. Hand-written: `npm run db:reset-migration` regenerates only the
-- init migration, so keep this directory.
--
-- The `source` stage ends as the job is created: its run was a row of fixed values (completed, one attempt, no
-- credits, 0 ms, started and completed at the job's created_at) that nothing read. Both forms leave `source` out of a
-- job's stages and trace, the stall sweep counts a job's activity from its created_at, and the spec's
-- `source.exited` is the event written with the job. On every submission's path it cost a row, two index entries
-- and a foreign-key check. `submit_jobs` keeps its signature, so API processes of the previous release go on working
-- during a rolling upgrade; `p_run_ids` (and `p_entry_ids`, see 20261129150000_reserve_recorded_by_hold) are no
-- longer read. `source` runs written before stay and are shown nowhere, as before.

CREATE OR REPLACE FUNCTION submit_jobs(
  p_workspace_id text,
  p_job_ids text[],
  p_pipeline_ids text[],
  p_pipeline_versions integer[],
  p_definitions jsonb[],
  p_priorities text[],
  p_execution_modes text[],
  p_environments text[],
  p_source_tags text[],
  p_client_reference_ids text[],
  p_schema_ids text[],
  p_metadata jsonb[],
  p_page_counts integer[],
  p_credits integer[],
  p_created_at timestamp(3)[],
  p_wait_for_review boolean[],
  p_key_hashes text[],
  p_key_fingerprints text[],
  p_run_ids text[], -- retired: no `source` stage run is written (above)
  p_event_ids text[],
  p_entry_ids text[], -- retired: the hold records the reservation (20261129150000_reserve_recorded_by_hold)
  -- files: one element per file; p_file_jobs is the (1-based) position of its job in the arrays above
  p_file_jobs integer[],
  p_file_ids text[],
  p_file_positions integer[],
  p_file_names text[],
  p_file_types text[],
  p_mime_types text[],
  p_file_sizes integer[],
  p_file_pages integer[],
  p_blob_keys text[],
  -- the outbox rows (outboxRowsOf in packages/queues): the first stage's per job, and the fan-out of each event
  p_stage_queue text,
  p_stage_name text,
  p_stage_job_keys text[],
  p_stage_payloads jsonb[],
  p_stage_priorities integer[],
  p_fanout_queue text,
  p_fanout_name text,
  p_fanout_job_keys text[],
  p_fanout_payloads jsonb[],
  p_direct_grace_ms integer,
  p_notify_channel text,
  p_platform_pipeline_id text
) RETURNS TABLE (answer text, stage_row_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_count integer := COALESCE(array_length(p_job_ids, 1), 0);
  v_answer text[] := array_fill('held'::text, ARRAY[v_count]);
  v_written boolean[] := array_fill(true, ARRAY[v_count]);
  v_stage_ids bigint[] := array_fill(NULL::bigint, ARRAY[v_count]);
  v_fanout_ids bigint[] := array_fill(NULL::bigint, ARRAY[v_count]);
  v_reserved text[];
  v_written_at integer[];
  v_owed boolean;
  v_dispatch_after timestamp(3) := (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => p_direct_grace_ms / 1000.0);
  v_refused text[];
  v_i integer;
BEGIN
  IF v_count = 0 THEN
    RETURN;
  END IF;

  -- The keys: each distinct one confirmed once (a group is almost always one client's key).
  FOR i IN 1..v_count LOOP
    CONTINUE WHEN p_key_hashes[i] IS NULL;
    IF i > 1 AND p_key_hashes[i] = p_key_hashes[i - 1] AND p_key_fingerprints[i] = p_key_fingerprints[i - 1] THEN
      v_written[i] := v_written[i - 1];
    ELSE
      v_written[i] := EXISTS (
        SELECT 1 FROM api_key_principal(p_key_hashes[i], p_platform_pipeline_id) k
        WHERE k.fingerprint = p_key_fingerprints[i]);
    END IF;
    IF NOT v_written[i] THEN
      v_answer[i] := 'key_changed';
    END IF;
  END LOOP;
  v_written_at := ARRAY(SELECT i FROM generate_subscripts(p_job_ids, 1) i WHERE v_written[i] ORDER BY i);
  IF cardinality(v_written_at) = 0 THEN
    RETURN QUERY SELECT v_answer[i], NULL::bigint FROM generate_subscripts(p_job_ids, 1) i ORDER BY i;
    RETURN;
  END IF;

  INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, stage_now, priority,
                    execution_mode, environment, source_tag, client_reference_id, schema_id, metadata, page_count,
                    credits_reserved, created_at, wait_for_review)
  SELECT p_job_ids[i], p_workspace_id, p_pipeline_ids[i], p_pipeline_versions[i], p_definitions[i], 'queued',
         'initialization', p_priorities[i], p_execution_modes[i], p_environments[i], p_source_tags[i],
         p_client_reference_ids[i], p_schema_ids[i], p_metadata[i], p_page_counts[i], p_credits[i], p_created_at[i],
         p_wait_for_review[i]
  FROM unnest(v_written_at) i;

  INSERT INTO job_files (id, job_id, position, file_name, file_type, mime_type, size_bytes, page_count, blob_key)
  SELECT p_file_ids[f], p_job_ids[p_file_jobs[f]], p_file_positions[f], p_file_names[f], p_file_types[f],
         p_mime_types[f], p_file_sizes[f], p_file_pages[f], p_blob_keys[f]
  FROM generate_subscripts(p_file_ids, 1) f
  WHERE v_written[p_file_jobs[f]];

  -- As recordEvents decides it: an event of a workspace without webhooks is written already fanned out.
  v_owed := EXISTS (SELECT 1 FROM webhooks WHERE workspace_id = p_workspace_id);
  INSERT INTO events (id, workspace_id, job_id, type, stage, transition, data, created_at, fanned_out_at)
  SELECT p_event_ids[i], p_workspace_id, p_job_ids[i], 'stage.exited', 'source', 'exited', '{}'::jsonb,
         p_created_at[i], CASE WHEN v_owed THEN NULL ELSE p_created_at[i] END
  FROM unnest(v_written_at) i;
  -- The outbox rows' ids taken here, so that each is known by its job's position.
  FOREACH v_i IN ARRAY v_written_at LOOP
    v_stage_ids[v_i] := nextval('outbox_id_seq');
    IF v_owed THEN
      v_fanout_ids[v_i] := nextval('outbox_id_seq');
    END IF;
  END LOOP;
  IF v_owed THEN
    INSERT INTO outbox (id, queue, name, job_key, payload, created_at)
    SELECT v_fanout_ids[i], p_fanout_queue, p_fanout_name, p_fanout_job_keys[i], p_fanout_payloads[i], p_created_at[i]
    FROM unnest(v_written_at) i;
    PERFORM pg_notify(p_notify_channel, p_fanout_queue);
  END IF;
  INSERT INTO outbox (id, queue, name, job_key, payload, priority, created_at, dispatch_after)
  SELECT v_stage_ids[i], p_stage_queue, p_stage_name, p_stage_job_keys[i], p_stage_payloads[i],
         p_stage_priorities[i], p_created_at[i], v_dispatch_after
  FROM unnest(v_written_at) i;

  v_reserved := ledger_reserve_credits_batch(
    p_workspace_id,
    ARRAY(SELECT p_job_ids[i] FROM unnest(v_written_at) WITH ORDINALITY w(i, o) ORDER BY o),
    ARRAY(SELECT 'hold_' || p_job_ids[i] FROM unnest(v_written_at) WITH ORDINALITY w(i, o) ORDER BY o),
    ARRAY(SELECT p_credits[i] FROM unnest(v_written_at) WITH ORDINALITY w(i, o) ORDER BY o),
    NULL, -- p_entry_ids: retired (migration 20261129150000_reserve_recorded_by_hold)
    NULL);
  FOR k IN 1..cardinality(v_written_at) LOOP
    v_answer[v_written_at[k]] := v_reserved[k];
  END LOOP;

  -- A refused job leaves nothing: its rows go again before the commit (its files with the job).
  v_refused := ARRAY(SELECT p_job_ids[i] FROM unnest(v_written_at) i WHERE v_answer[i] <> 'held');
  IF cardinality(v_refused) > 0 THEN
    DELETE FROM outbox WHERE id = ANY (ARRAY(
      SELECT unnest(ARRAY[v_stage_ids[i], v_fanout_ids[i]]) FROM unnest(v_written_at) i WHERE v_answer[i] <> 'held'));
    DELETE FROM events WHERE id = ANY (ARRAY(SELECT p_event_ids[i] FROM unnest(v_written_at) i WHERE v_answer[i] <> 'held'));
    DELETE FROM job_files WHERE job_id = ANY (v_refused);
    DELETE FROM jobs WHERE id = ANY (v_refused);
  END IF;

  RETURN QUERY
    SELECT v_answer[i], CASE WHEN v_answer[i] = 'held' THEN v_stage_ids[i] END
    FROM generate_subscripts(p_job_ids, 1) i ORDER BY i;
END
$$;
