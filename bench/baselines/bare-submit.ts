// The submit baseline: the least a submission must do, with no framework around it. A bare Koa app parses the
// multipart body to a temporary file (formidable, as Quire does), sniffs the type and counts the pages (the same
// @quire/extraction calls), INSERTs one row, runs one conditional balance UPDATE and adds one BullMQ job.
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { countPages, sniffFileType } from '@quire/extraction'
import { Queue } from 'bullmq'
import formidable from 'formidable'
import { Redis } from 'ioredis'
import Koa from 'koa'
import { trackRequests } from '../lib/in-flight.ts'
import pg from 'pg'

const uploadDir = process.env.BENCH_UPLOAD_DIR!
mkdirSync(uploadDir, { recursive: true })
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
await pool.query(`CREATE TABLE IF NOT EXISTS bench_jobs (id text PRIMARY KEY, pages int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS bench_balances (id text PRIMARY KEY, available bigint NOT NULL);
  INSERT INTO bench_balances VALUES ('ws', 1000000000000) ON CONFLICT DO NOTHING`)
const queue = new Queue('bench-bare-submit', {
  connection: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 }),
  prefix: process.env.QUIRE_QUEUE_PREFIX,
})

const app = new Koa()
const requests = trackRequests(app)
app.use(async (ctx) => {
  if (ctx.method !== 'POST') {
    ctx.status = ctx.path === '/healthz' ? 200 : 404
    return
  }
  const form = formidable({ uploadDir, maxFileSize: 200 * 1024 * 1024 })
  const [, files] = await form.parse(ctx.req)
  const file = Object.values(files).flat()[0]
  if (!file) {
    ctx.status = 400
    return
  }
  try {
    const sniffed = await sniffFileType(file.filepath)
    if (!sniffed) {
      ctx.status = 422
      return
    }
    const pages = await countPages(file.filepath, sniffed.type)
    const id = `job_${randomBytes(12).toString('hex')}`
    await pool.query('INSERT INTO bench_jobs (id, pages) VALUES ($1, $2)', [id, pages])
    const charged = await pool.query(
      'UPDATE bench_balances SET available = available - $1 WHERE id = $2 AND available >= $1',
      [pages, 'ws'],
    )
    if (charged.rowCount !== 1) {
      ctx.status = 402
      return
    }
    await queue.add('job', { id }, { jobId: id, removeOnComplete: true })
    ctx.status = 202
    ctx.body = { job_id: id, status: 'queued', pages }
  } finally {
    await rm(file.filepath, { force: true })
  }
})
const server = app.listen(Number(process.env.BENCH_PORT), '127.0.0.1')
const stop = async () => {
  // Requests the load generator left in flight finish before the pool and queues close under them.
  server.close()
  await requests.drained()
  await queue.obliterate({ force: true }).catch(() => {})
  await queue.close()
  await pool.end()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
