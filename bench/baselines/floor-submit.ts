// The submit floor: what the spec and DESIGN.md require of a submission, done the cheapest correct way, with no
// framework around it. The multipart body goes to a temporary file (formidable, in the bench's bare upload shell)
// while its first bytes are kept; the type is told from those bytes without opening the file again
// (sniffFileTypeFromHead; only a type the head cannot tell, a DOCX's zip, opens it); the pages come from the file's
// structure (countPages: the PDF's cross-reference and page tree root, a TIFF's IFD chain); the file is renamed into
// the store (a worker must find it); then ONE statement checks the API key, reserves the credits with a conditional
// UPDATE of the balance and, only when that held, writes the job row (its file, pages and reservation in it), the
// `source.exited` event the spec fires at submission, and the outbox row that keeps the job when Redis is down
// (DESIGN: a Redis outage delays work, it never loses a job or an event); then one BullMQ job (its id the job's, so a
// relay sending the outbox row again adds nothing). Left out as Quire's own choices, not the spec's: the stage-run
// record, the ledger's hold and double-entry row, the key checked before the body is read. Tables of its own.
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX; BENCH_FLOOR_KEY (the key it accepts).
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { countPages, sniffFileType, sniffFileTypeFromHead } from '@quire/extraction'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import pg from 'pg'
import { serveUploadApp } from '../lib/upload-app.ts'

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
      INSERT INTO bench_floor_outbox (job_id) SELECT $2 FROM job)
    SELECT EXISTS (SELECT 1 FROM caller) AS known, EXISTS (SELECT 1 FROM job) AS created`,
}

const keyHash = (key: string) => createHash('sha256').update(key).digest('hex')

// Where submitted files stay for the workers: beside the temporary files, so that keeping one is a rename.
const store = path.join(process.env.BENCH_UPLOAD_DIR!, 'store')
mkdirSync(store, { recursive: true })
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
await pool.query(`CREATE TABLE IF NOT EXISTS bench_floor_keys (key_hash text PRIMARY KEY, workspace_id text NOT NULL);
  CREATE TABLE IF NOT EXISTS bench_floor_balances (workspace_id text PRIMARY KEY, available bigint NOT NULL);
  CREATE TABLE IF NOT EXISTS bench_floor_jobs (id text PRIMARY KEY, workspace_id text NOT NULL, status text NOT NULL,
    file_name text NOT NULL, file_type text NOT NULL, size_bytes bigint NOT NULL, pages int NOT NULL,
    credits_reserved int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS bench_floor_events (id bigserial PRIMARY KEY, job_id text NOT NULL, workspace_id text NOT NULL,
    type text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS bench_floor_outbox (id bigserial PRIMARY KEY, job_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), dispatched_at timestamptz)`)
await pool.query('INSERT INTO bench_floor_keys VALUES ($1, $2) ON CONFLICT DO NOTHING', [
  keyHash(process.env.BENCH_FLOOR_KEY!),
  'ws_floor',
])
await pool.query(`INSERT INTO bench_floor_balances VALUES ('ws_floor', 1000000000000) ON CONFLICT DO NOTHING`)
const queue = new Queue('bench-floor-submit', {
  connection: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 }),
  prefix: process.env.QUIRE_QUEUE_PREFIX,
})

serveUploadApp({
  uploadDir: process.env.BENCH_UPLOAD_DIR!,
  keepHead: true,
  async handle(ctx, file) {
    const sniffed = (await sniffFileTypeFromHead(file.head!, file.size)) ?? (await sniffFileType(file.filepath))
    if (!sniffed) {
      ctx.status = 422
      return
    }
    const pages = await countPages(file.filepath, sniffed.type)
    const id = `job_${randomBytes(12).toString('hex')}`
    const stored = path.join(store, id)
    await rename(file.filepath, stored)
    const values = [
      keyHash(ctx.get('X-API-Key')),
      id,
      pages,
      file.originalFilename ?? 'upload',
      sniffed.type,
      file.size,
    ]
    const [row] = (await pool.query({ ...SUBMIT, values })).rows as [{ known: boolean; created: boolean }]
    if (!row.created) {
      await rm(stored)
      ctx.status = row.known ? 402 : 401
      return
    }
    await queue.add('job', { id }, { jobId: id, removeOnComplete: true })
    ctx.status = 202
    ctx.body = { job_id: id, status: 'queued', pages }
  },
  async close() {
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
    await pool.end()
  },
})
