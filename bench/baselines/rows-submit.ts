// A reference for the submit scenario, not its baseline: the bare app (bench/baselines/bare-submit.ts) writing, in
// place of its one INSERT and one UPDATE, the rows a Quire submission commits — the job (with its one file and the
// credit hold that records the reservation in its own columns, as a lone submission keeps them), the `stage.exited`
// event of `source`, the first stage's outbox row and the workspace's balance UPDATE — into Quire's own tables (their
// indexes, foreign keys and checks), as one plain
// statement of data-modifying CTEs with typed parameters: no PL/pgSQL, no JSON rows, no advisory lock, no spending
// cap, no API key. The outbox row is written as sent (the app adds the BullMQ job itself, and no relay may send it
// again), and a refused charge would leave the rows in place (the reference's workspace never runs short). It is the
// floor under any way of writing those rows in one round trip: measured beside the bare app it says what the rows
// themselves cost, apart from how Quire writes them (`submit_job`) and the HTTP framework. The app around the write
// is the bare app's own (bench/lib/bare-submit-app.ts).
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX.
import { randomBytes } from 'node:crypto'
import { waitFor } from '@quire/testing'
import { serveBareSubmit } from '../lib/bare-submit-app.ts'

const ROWS = {
  name: 'bench_rows_submit',
  text: `WITH job AS (
      INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, stage_now, priority,
                        execution_mode, environment, page_count, credits_reserved, created_at, wait_for_review,
                        file_name, file_type, mime_type, size_bytes, blob_key, hold_period)
      VALUES ($1, $2, 'parse', 1, $3::jsonb, 'queued', 'initialization', 'standard', 'async', 'production', $4, $4,
              $5::timestamp, false, $6, 'pdf', 'application/pdf', $7, $8, date_trunc('month', $5::timestamp)::date)),
    event AS (
      INSERT INTO events (id, workspace_id, job_id, type, stage, transition, created_at, fanned_out_at)
      VALUES ($9, $2, $1, 'stage.exited', 'source', 'exited', $5, $5)),
    outbox AS (
      INSERT INTO outbox (queue, name, job_key, payload, created_at, dispatched_at)
      VALUES ('stage', 'initialization', $1 || ':initialization', jsonb_build_object('jobId', $1::text), $5, $5)
      RETURNING id),
    charged AS (
      UPDATE workspaces SET credits_available = credits_available - $4, credits_reserved = credits_reserved + $4
      WHERE id = $2 AND credits_available >= $4
      RETURNING 1)
    SELECT (SELECT count(*) FROM charged)::int AS charged, (SELECT id FROM outbox) AS outbox_id`,
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

await serveBareSubmit({
  queueName: 'bench-rows-submit',
  async prepare(pool) {
    // A workspace of its own, with credits enough for any run; its rows are the database's to drop with the run.
    const workspaceId = `ws_rows_${randomBytes(6).toString('hex')}`
    await pool.query(
      `INSERT INTO workspaces (id, name, api_form, credits_available) VALUES ($1, 'bench rows reference', 'B', 2000000000)`,
      [workspaceId],
    )
    // The platform parse pipeline's definition, as a job stores it: the API, started beside this app, writes it.
    const definition = await waitFor(
      async () =>
        (
          await pool.query<{ definition: string }>(
            `SELECT definition::text AS definition FROM pipeline_versions WHERE pipeline_id = 'parse'`,
          )
        ).rows[0]?.definition,
      { timeoutMs: 60_000, intervalMs: 100, message: 'no platform parse pipeline' },
    )
    return async (pool, job) => {
      const values = [
        job.id,
        workspaceId,
        definition,
        job.pages,
        new Date().toISOString(),
        job.fileName,
        job.sizeBytes,
        `${workspaceId}/${job.id.slice(-2)}/${job.id}-0`,
        newId('evt'),
      ]
      const [row] = (await pool.query({ ...ROWS, values })).rows as [{ charged: number }]
      return row.charged === 1
    }
  },
})
