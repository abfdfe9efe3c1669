// The submit floor: what the spec and DESIGN.md require of a submission, done the cheapest correct way, with no
// framework around it. The multipart body goes to a temporary file (formidable, in the bench's bare upload shell)
// while its first bytes are kept; the type is told from those bytes without opening the file again
// (sniffFileTypeFromHead; only a type the head cannot tell, a DOCX's zip, opens it); the pages come from the file's
// structure (countPages: the PDF's cross-reference and page tree root, a TIFF's IFD chain; a PDF no longer than the
// kept head from those bytes, without reading the file again); the file is renamed into the store (a worker must
// find it; nothing is left to remove afterwards); then ONE statement does what the spec asks of the submission: finds
// the key and its scope (`jobs:write`, else 403), selects the pipeline (the key's bound one, else the workspace's
// default, else the platform's `parse`; its latest published version, else 400), checks the type and size against
// that version's `accept` (else 422), reserves pages × its `credits.per_page` with a conditional UPDATE of the
// balance that also keeps the workspace's spending cap (else 402), and only when all that held writes the job row
// (its file, pages, pipeline version and reservation in it), the `source.exited` event the spec fires at submission,
// and the outbox row that keeps the job when Redis is down (DESIGN: a Redis outage delays work, it never loses a job
// or an event); then the spec's answer (an array of one submit-response object: job_id, status, execution_mode,
// status_url, result_url, submitted_at), and one BullMQ job in the next turn of the event loop (its id the job's, so a
// relay sending the outbox row again adds nothing while BullMQ holds the job); once added, its outbox row is deleted
// with the others added in the same 20 ms, so that a relay never sends it again after the job is done. Left out as
// Quire's own choices, not the spec's: the stage-run record, the ledger's hold and double-entry row, the key checked
// before the body is read, the principal read once and confirmed, a spending cap per month (the spec names a cap, not
// its period: the floor's holds for all time), sent outbox rows kept for a while. Tables of its own.
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX; BENCH_FLOOR_KEY (the key it accepts).
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { FILE_TYPES } from '@quire/extraction'
import { serveBareSubmit } from '../lib/bare-submit-app.ts'

// $1 key hash, $2 job id, $3 pages, $4 file name, $5 type, $6 size in bytes.
const SUBMIT = {
  name: 'bench_floor_submit',
  text: `WITH caller AS (
      SELECT k.workspace_id, 'jobs:write' = ANY (k.scopes) AS allowed, run.pipeline_id, run.version,
             run.definition->'accept'->'types' ? $5
               AND $6 <= (run.definition->'accept'->>'max_file_mb')::bigint * 1048576 AS accepted,
             $3 * (run.definition->'credits'->>'per_page')::int AS credits
      FROM bench_floor_keys k JOIN bench_floor_workspaces w ON w.id = k.workspace_id
      LEFT JOIN LATERAL (
        SELECT v.pipeline_id, v.version, v.definition FROM bench_floor_pipeline_versions v
        WHERE v.pipeline_id = COALESCE(k.pipeline_id, w.default_pipeline_id, 'parse') AND v.published
        ORDER BY v.version DESC LIMIT 1) run ON true
      WHERE k.key_hash = $1),
    charged AS (
      UPDATE bench_floor_workspaces w
      SET available = w.available - c.credits, spent = w.spent + c.credits
      FROM caller c
      WHERE w.id = c.workspace_id AND c.allowed AND c.accepted AND w.available >= c.credits
        AND (w.spending_cap IS NULL OR w.spent + c.credits <= w.spending_cap)
      RETURNING w.id AS workspace_id, c.pipeline_id, c.version, c.credits),
    job AS (
      INSERT INTO bench_floor_jobs (id, workspace_id, pipeline_id, pipeline_version, status, file_name, file_type,
                                    size_bytes, pages, credits_reserved)
      SELECT $2, workspace_id, pipeline_id, version, 'queued', $4, $5, $6, $3, credits FROM charged
      RETURNING workspace_id),
    event AS (
      INSERT INTO bench_floor_events (job_id, workspace_id, type) SELECT $2, workspace_id, 'source.exited' FROM job),
    outbox AS (
      INSERT INTO bench_floor_outbox (job_id) SELECT $2 FROM job RETURNING id)
    SELECT c.allowed, c.version IS NOT NULL AS published, c.accepted, (SELECT id FROM outbox) AS outbox_id
    FROM (SELECT 1) one LEFT JOIN caller c ON true`,
}

const keyHash = (key: string) => createHash('sha256').update(key).digest('hex')

// The outbox rows whose BullMQ add succeeded, by job id, deleted together every SENT_WINDOW_MS (Quire's direct
// dispatch marks its own the same way): a relay re-sends only the rows left, so one that was sent is never added again
// after its BullMQ job is gone. Deleted rather than marked: keeping sent rows for a while is Quire's choice.
const SENT_WINDOW_MS = 20
const outboxIds = new Map<string, string>()
let sent: string[] = []
let sentTimer: NodeJS.Timeout | null = null
let floorPool: import('pg').Pool

const baseUrl = `http://127.0.0.1:${process.env.BENCH_PORT}`

await serveBareSubmit({
  queueName: 'bench-floor-submit',
  // Form B's async answer: one submit-response object per file.
  answer: (job) => [
    {
      job_id: job.id,
      status: 'queued',
      execution_mode: 'async',
      status_url: `${baseUrl}/v1/jobs/${job.id}`,
      result_url: `${baseUrl}/v1/jobs/${job.id}?include=result`,
      submitted_at: job.submittedAt.toISOString(),
    },
  ],
  keepHead: true,
  writeMovesFile: true,
  addAfterAnswer: true,
  onAddSettled(jobId, added) {
    const id = outboxIds.get(jobId)
    outboxIds.delete(jobId)
    // Not added: the row stays for the relay.
    if (!added || id === undefined) return
    sent.push(id)
    if (sentTimer === null)
      sentTimer = setTimeout(() => {
        sentTimer = null
        const ids = sent
        sent = []
        // A failed delete leaves the rows to the relay, which adds them again under the same job ids.
        floorPool.query('DELETE FROM bench_floor_outbox WHERE id = ANY($1::bigint[])', [ids]).catch(() => {})
      }, SENT_WINDOW_MS)
  },
  async prepare(pool) {
    floorPool = pool
    await pool.query(`CREATE TABLE IF NOT EXISTS bench_floor_workspaces (id text PRIMARY KEY, available bigint NOT NULL,
        spent bigint NOT NULL DEFAULT 0, spending_cap bigint, default_pipeline_id text);
      CREATE TABLE IF NOT EXISTS bench_floor_keys (key_hash text PRIMARY KEY, workspace_id text NOT NULL,
        scopes text[] NOT NULL, pipeline_id text);
      CREATE TABLE IF NOT EXISTS bench_floor_pipeline_versions (pipeline_id text NOT NULL, version int NOT NULL,
        published boolean NOT NULL, definition jsonb NOT NULL, PRIMARY KEY (pipeline_id, version));
      CREATE TABLE IF NOT EXISTS bench_floor_jobs (id text PRIMARY KEY, workspace_id text NOT NULL,
        pipeline_id text NOT NULL, pipeline_version int NOT NULL, status text NOT NULL,
        priority text NOT NULL DEFAULT 'standard', execution_mode text NOT NULL DEFAULT 'async',
        environment text NOT NULL DEFAULT 'production', file_name text NOT NULL, file_type text NOT NULL,
        size_bytes bigint NOT NULL, pages int NOT NULL, credits_reserved int NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS bench_floor_events (id bigserial PRIMARY KEY, job_id text NOT NULL,
        workspace_id text NOT NULL, type text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS bench_floor_outbox (id bigserial PRIMARY KEY, job_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`)
    // One workspace with the bench's balance and no cap, its key holding `jobs:write` and bound to no pipeline, and
    // the platform's `parse` pipeline published at version 1 with DESIGN.md's default definition.
    await pool.query(`INSERT INTO bench_floor_workspaces (id, available) VALUES ('ws_floor', 1000000000000)
      ON CONFLICT DO NOTHING`)
    await pool.query('INSERT INTO bench_floor_keys VALUES ($1, $2, $3, NULL) ON CONFLICT DO NOTHING', [
      keyHash(process.env.BENCH_FLOOR_KEY!),
      'ws_floor',
      ['jobs:write', 'jobs:read'],
    ])
    await pool.query(`INSERT INTO bench_floor_pipeline_versions VALUES ('parse', 1, true, $1) ON CONFLICT DO NOTHING`, [
      { accept: { types: [...FILE_TYPES], max_file_mb: 100 }, credits: { per_page: 1 } },
    ])
    // Where submitted files stay for the workers: beside the temporary files, so that keeping one is a rename.
    const store = path.join(process.env.BENCH_UPLOAD_DIR!, 'store')
    mkdirSync(store, { recursive: true })
    return async (pool, job) => {
      const stored = path.join(store, job.id)
      await rename(job.filepath, stored)
      const values = [keyHash(job.apiKey), job.id, job.pages, job.fileName, job.fileType, job.sizeBytes]
      const [row] = (await pool.query({ ...SUBMIT, values })).rows as [
        { allowed: boolean | null; published: boolean | null; accepted: boolean | null; outbox_id: string | null },
      ]
      if (row.outbox_id !== null) {
        outboxIds.set(job.id, row.outbox_id)
        return true
      }
      await rm(stored)
      if (row.allowed === null) return 'unauthorized'
      if (!row.allowed) return 'insufficient_scope'
      if (!row.published) return 'not_published'
      return row.accepted ? false : 'not_accepted'
    }
  },
})
