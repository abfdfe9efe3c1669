// The bare submit app that bench/baselines/bare-submit.ts and rows-submit.ts both run, with only its database write
// told apart: a Koa app with no framework around it parses the multipart body to a temporary file (formidable, as
// Quire does), sniffs the type and counts the pages (the same @quire/extraction calls), calls `write` and adds one
// BullMQ job. Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { countPages, sniffFileType } from '@quire/extraction'
import { Queue } from 'bullmq'
import formidable from 'formidable'
import { Redis } from 'ioredis'
import Koa from 'koa'
import pg from 'pg'
import { trackRequests } from './in-flight.ts'

/** What a side writes for one submission; false when the balance refused it (answered 402). */
export type SubmitWrite = (
  pool: pg.Pool,
  job: { id: string; pages: number; fileName: string; sizeBytes: number },
) => Promise<boolean>

/** Serves the bare submit app until SIGTERM or SIGINT; `prepare` runs once on the pool before it listens. */
export async function serveBareSubmit(opts: { queueName: string; prepare: (pool: pg.Pool) => Promise<SubmitWrite> }) {
  const uploadDir = process.env.BENCH_UPLOAD_DIR!
  mkdirSync(uploadDir, { recursive: true })
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
  const write = await opts.prepare(pool)
  const queue = new Queue(opts.queueName, {
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
      if (!(await write(pool, { id, pages, fileName: file.originalFilename ?? 'upload', sizeBytes: file.size }))) {
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
}
