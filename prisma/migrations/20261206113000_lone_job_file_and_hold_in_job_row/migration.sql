-- A job submitted alone with one file (`SUBMIT_ONE`, the statement of a lone submission) keeps its file and its
-- pending hold in its own row instead of a `job_files` row and a `credit_holds` row: two written tables, their six
-- indexes and two foreign-key checks fewer per submission (bench/README.md, 2026-12-06). Hand-written:
-- `npm run db:reset-migration` regenerates only the init migration, so keep this directory.
--
-- The file: `blob_key` set means the job's only file is in the row (position 0, its pages the job's `page_count`);
-- a job written by `submit_jobs` (a group) or with several files keeps its `job_files` rows and leaves these null.
--
-- The hold: `hold_period` set means the job holds `credits_reserved` credits, pending, counted against that UTC month
-- of the spending cap, created at the job's `created_at`, with the id `hold_<job id>` (holdIdFor). A hold leaves the
-- row for `credit_holds` before it is resolved (`ledger_hold_to_table`, called by settlement and void), so posted,
-- voided and expired holds are all in the table; the ledger's readers read `ledger_holds`, both together. Job rows
-- are never deleted but with their workspace, whose holds go with it. Upgrade the stage workers before the API: a
-- worker of an earlier release reads neither column.

ALTER TABLE jobs
  ADD COLUMN file_name text,
  ADD COLUMN file_type text,
  ADD COLUMN mime_type text,
  ADD COLUMN size_bytes integer,
  ADD COLUMN blob_key text,
  ADD COLUMN hold_period date,
  ADD CONSTRAINT jobs_file_in_row CHECK (
    (blob_key IS NULL) = (file_name IS NULL) AND (blob_key IS NULL) = (file_type IS NULL)
    AND (blob_key IS NULL) = (mime_type IS NULL) AND (blob_key IS NULL) = (size_bytes IS NULL)),
  ADD CONSTRAINT jobs_hold_period_is_month CHECK (hold_period IS NULL OR EXTRACT(DAY FROM hold_period) = 1);

-- Every hold of the ledger: the table's, and the pending ones still in their job's row.
CREATE VIEW ledger_holds AS
  SELECT id, workspace_id, job_id, amount, status, posted, period, created_at, resolved_at FROM credit_holds
  UNION ALL
  SELECT 'hold_' || id, workspace_id, id, credits_reserved, 'pending'::"HoldStatus", NULL::integer, hold_period,
         created_at, NULL::timestamp(3)
  FROM jobs WHERE hold_period IS NOT NULL;

-- Moves a job's pending hold from its row into `credit_holds` (nothing when it is there already): one statement that
-- locks the job row first, so a concurrent caller waits for it and then finds nothing to move. The balances do not
-- change: the same hold, kept in another place.
CREATE FUNCTION ledger_hold_to_table(p_job_id text) RETURNS void
LANGUAGE sql AS $$
  WITH held AS (
    SELECT id, workspace_id, credits_reserved, hold_period, created_at FROM jobs
    WHERE id = p_job_id AND hold_period IS NOT NULL FOR UPDATE),
  cleared AS (
    UPDATE jobs j SET hold_period = NULL FROM held WHERE j.id = held.id)
  INSERT INTO credit_holds (id, workspace_id, job_id, amount, period, created_at)
  SELECT 'hold_' || id, workspace_id, id, credits_reserved, hold_period, created_at FROM held
$$;

-- The pending holds still in job rows, by age: what the expiry sweeper and the ledger's listing look for among them,
-- without reading every job. A lone submission writes one entry here instead of the hold's row and its four indexes.
CREATE INDEX jobs_hold_in_row_idx ON jobs (workspace_id, created_at) WHERE hold_period IS NOT NULL;
