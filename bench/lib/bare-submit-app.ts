// The bare submit app that bench/baselines/bare-submit.ts, rows-submit.ts and floor-submit.ts run, with only their
// database write told apart: in the bench's bare upload shell (./upload-app.ts) it sniffs the type (from the upload's
// first bytes with `keepHead`) and counts the pages (the same @quire/extraction calls), calls `write` and adds one
// BullMQ job. Env: DATABASE_URL, REDIS_URL, BENCH_PORT,
// BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX.
import { randomBytes } from 'node:crypto'
import { countPages, type FileType, sniffFileType, sniffFileTypeFromHead } from '@quire/extraction'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import pg from 'pg'
import { serveUploadApp } from './upload-app.ts'

/**
 * What a side writes for one submission: true when written; false when the balance refused it (answered 402). A
 * side that checks the key (`apiKey`, the X-API-Key header) and selects the pipeline answers the spec's refusals too:
 * `unauthorized` (unknown key, 401), `insufficient_scope` (no `jobs:write`, 403), `not_published` (the selected
 * pipeline has no published version, 400), `not_accepted` (the type or size the pipeline does not take, 422).
 */
export type SubmitWrite = (
  pool: pg.Pool,
  job: {
    id: string
    pages: number
    fileName: string
    fileType: FileType
    sizeBytes: number
    filepath: string
    apiKey: string
  },
) => Promise<boolean | SubmitRefusal>

type SubmitRefusal = 'unauthorized' | 'insufficient_scope' | 'not_published' | 'not_accepted'
const REFUSAL_STATUS: Record<SubmitRefusal, number> = {
  unauthorized: 401,
  insufficient_scope: 403,
  not_published: 400,
  not_accepted: 422,
}

/** Serves the bare submit app until SIGTERM or SIGINT; `prepare` runs once on the pool before it listens. */
export async function serveBareSubmit(opts: {
  queueName: string
  prepare: (pool: pg.Pool) => Promise<SubmitWrite>
  /** Sniff from the first bytes kept while the upload was written, instead of opening the file again. */
  keepHead?: boolean
  /**
   * `write` always moves the upload out of its temporary path (into the side's store, or away on a refusal) once it
   * returns, so nothing is left to remove: the shell's removal would cost a needless file-system round trip.
   */
  writeMovesFile?: boolean
  /**
   * `write` commits an outbox row with the job, so the BullMQ job may be added after the answer (in the event loop's
   * next turn, as Quire's direct dispatch does): the row is the guarantee, the add only the fast path.
   */
  addAfterAnswer?: boolean
  /**
   * Called once the job's BullMQ add is settled (with `addAfterAnswer`): `added`, the side may mark its outbox row as
   * sent; otherwise the row stays for the relay.
   */
  onAddSettled?: (jobId: string, added: boolean) => void
  /** The 202's body (default: the job's id, status and pages); the floor answers the spec's submit-response. */
  answer?: (job: { id: string; pages: number; submittedAt: Date }) => unknown
}) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
  const write = await opts.prepare(pool)
  const queue = new Queue(opts.queueName, {
    connection: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 }),
    prefix: process.env.QUIRE_QUEUE_PREFIX,
  })
  serveUploadApp({
    uploadDir: process.env.BENCH_UPLOAD_DIR!,
    keepHead: opts.keepHead,
    async handle(ctx, file) {
      // From the head where it decides (undefined: only the file can tell, a DOCX's zip).
      let sniffed = file.head ? await sniffFileTypeFromHead(file.head, file.size) : undefined
      if (sniffed === undefined) sniffed = await sniffFileType(file.filepath)
      if (!sniffed) {
        ctx.status = 422
        return
      }
      // A file no longer than its kept head is all in memory: counted from there, as Quire's intake does.
      const pages = await countPages(
        file.filepath,
        sniffed.type,
        file.head && { head: file.head, sizeBytes: file.size },
      )
      const id = `job_${randomBytes(12).toString('hex')}`
      const submittedAt = new Date()
      const written = await write(pool, {
        id,
        pages,
        fileName: file.originalFilename ?? 'upload',
        fileType: sniffed.type,
        sizeBytes: file.size,
        filepath: file.filepath,
        apiKey: ctx.get('X-API-Key'),
      })
      file.moved = opts.writeMovesFile
      if (written !== true) {
        ctx.status = written === false ? 402 : REFUSAL_STATUS[written]
        return
      }
      if (opts.addAfterAnswer) {
        // The outbox row committed with the job keeps it if this add never happens, as Quire's direct dispatch.
        setImmediate(() =>
          queue.add('job', { id }, { jobId: id, removeOnComplete: true }).then(
            () => opts.onAddSettled?.(id, true),
            () => opts.onAddSettled?.(id, false),
          ),
        )
      } else {
        await queue.add('job', { id }, { jobId: id, removeOnComplete: true })
      }
      ctx.status = 202
      ctx.body = opts.answer ? opts.answer({ id, pages, submittedAt }) : { job_id: id, status: 'queued', pages }
    },
    async close() {
      await queue.obliterate({ force: true }).catch(() => {})
      await queue.close()
      await pool.end()
    },
  })
}
