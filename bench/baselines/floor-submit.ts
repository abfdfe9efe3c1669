// The submit floor: what the spec and DESIGN.md require of a submission, done the cheapest correct way, with no
// framework around it. The multipart body goes to a temporary file (formidable, in the bench's bare upload shell)
// while its first bytes are kept; the type is told from those bytes without opening the file again
// (sniffFileTypeFromHead; only a type the head cannot tell, a DOCX's zip, opens it); the pages come from the file's
// structure (countPages: the PDF's cross-reference and page tree root, a TIFF's IFD chain; a PDF no longer than the
// kept head from those bytes, without reading the file again); the file is renamed into the store (a worker must
// find it; nothing is left to remove afterwards); then ONE statement checks the API key, reserves the credits with a
// conditional UPDATE of the balance and, only when that held, writes the job row (its file, pages and reservation in
// it), the `source.exited` event the spec fires at submission, and the outbox row that keeps the job when Redis is
// down (DESIGN: a Redis outage delays work, it never loses a job or an event); then the answer, and one BullMQ job in
// the next turn of the event loop (its id the job's, so a relay sending the outbox row again adds nothing while BullMQ
// holds the job); once added, its outbox row is deleted with the others added in the same 20 ms, so that a relay never
// sends it again after the job is done. Left out as Quire's own choices, not the spec's: the stage-run record, the
// ledger's hold and double-entry row, the key checked before the body is read, sent outbox rows kept for a while.
// Tables of its own.
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX; BENCH_FLOOR_KEY (the key it accepts).
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { serveBareSubmit } from '../lib/bare-submit-app.ts'

const SUBMIT = {
  name: 'bench_floor_submit',
  text: `WITH caller AS (
      SELECT workspace_id FROM bench_floor_keys WHERE key_hash = $1),
    charged AS (
      UPDATE bench_floor_balances b SET available = b.available - $3
      FROM caller WHERE b.workspace_id = caller.workspace_id AND b.available >= $3
      RETURNING b.workspace_id),
    job AS (
      INSERT INTO bench_floor_jobs (id, workspace_id, status, file_name, file_type, size_bytes, pages, credits_reserved)
      SELECT $2, workspace_id, 'queued', $4, $5, $6, $3, $3 FROM charged
      RETURNING workspace_id),
    event AS (
      INSERT INTO bench_floor_events (job_id, workspace_id, type) SELECT $2, workspace_id, 'source.exited' FROM job),
    outbox AS (
      INSERT INTO bench_floor_outbox (job_id) SELECT $2 FROM job RETURNING id)
    SELECT EXISTS (SELECT 1 FROM caller) AS known, (SELECT id FROM outbox) AS outbox_id`,
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

await serveBareSubmit({
  queueName: 'bench-floor-submit',
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
    await pool.query(`CREATE TABLE IF NOT EXISTS bench_floor_keys (key_hash text PRIMARY KEY, workspace_id text NOT NULL);
      CREATE TABLE IF NOT EXISTS bench_floor_balances (workspace_id text PRIMARY KEY, available bigint NOT NULL);
      CREATE TABLE IF NOT EXISTS bench_floor_jobs (id text PRIMARY KEY, workspace_id text NOT NULL, status text NOT NULL,
        file_name text NOT NULL, file_type text NOT NULL, size_bytes bigint NOT NULL, pages int NOT NULL,
        credits_reserved int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS bench_floor_events (id bigserial PRIMARY KEY, job_id text NOT NULL,
        workspace_id text NOT NULL, type text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS bench_floor_outbox (id bigserial PRIMARY KEY, job_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`)
    await pool.query('INSERT INTO bench_floor_keys VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      keyHash(process.env.BENCH_FLOOR_KEY!),
      'ws_floor',
    ])
    await pool.query(`INSERT INTO bench_floor_balances VALUES ('ws_floor', 1000000000000) ON CONFLICT DO NOTHING`)
    // Where submitted files stay for the workers: beside the temporary files, so that keeping one is a rename.
    const store = path.join(process.env.BENCH_UPLOAD_DIR!, 'store')
    mkdirSync(store, { recursive: true })
    return async (pool, job) => {
      const stored = path.join(store, job.id)
      await rename(job.filepath, stored)
      const values = [keyHash(job.apiKey), job.id, job.pages, job.fileName, job.fileType, job.sizeBytes]
      const [row] = (await pool.query({ ...SUBMIT, values })).rows as [{ known: boolean; outbox_id: string | null }]
      if (row.outbox_id !== null) {
        outboxIds.set(job.id, row.outbox_id)
        return true
      }
      await rm(stored)
      return row.known ? false : 'unauthorized'
    }
  },
})
