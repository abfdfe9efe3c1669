// The shell every bare submit-side app of the bench shares (the bare app, the rows reference, the domain reference):
// a Koa app with no framework around it that answers /healthz, parses a POST's multipart body to a temporary file
// (formidable, as Quire does), hands the file to the side's own `handle` and removes it afterwards; on SIGTERM or
// SIGINT it lets the requests in flight finish, then closes the side's connections and exits.
import { randomUUID } from 'node:crypto'
import { createWriteStream, mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { SNIFF_HEAD_BYTES } from '@quire/extraction'
import formidable from 'formidable'
import Koa from 'koa'
import { trackRequests } from './in-flight.ts'

export type UploadedFile = {
  filepath: string
  originalFilename: string | null
  size: number
  /** With `keepHead`: the first SNIFF_HEAD_BYTES bytes, kept as they were written. */
  head?: Buffer
  /** Set by a side that moved the file away (into its store): the shell then has nothing to remove, as the API. */
  moved?: boolean
}

export function serveUploadApp<Caller>(opts: {
  uploadDir: string
  /** Runs before the body is read (the API checks the key there); null answers 401. */
  authorize?: (ctx: Koa.Context) => Promise<Caller | null>
  handle: (ctx: Koa.Context, file: UploadedFile, caller: Caller | undefined) => Promise<void>
  /** Closes the side's pools and queues once no request is in flight. */
  close: () => Promise<void>
  /**
   * Keep each file's first bytes as they are written (`file.head`), so the side can tell the type without opening
   * the file again, and name temporary files by a random UUID (formidable's own names cost 0.1 ms each).
   */
  keepHead?: boolean
}) {
  mkdirSync(opts.uploadDir, { recursive: true })
  const app = new Koa()
  const requests = trackRequests(app)
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') {
      ctx.status = ctx.path === '/healthz' ? 200 : 404
      return
    }
    let caller: Caller | undefined
    if (opts.authorize) {
      const found = await opts.authorize(ctx)
      if (!found) {
        ctx.status = 401
        return
      }
      caller = found
      // As the API: a client that left during the check has a destroyed stream, which formidable would wait on
      // forever (and the shutdown with it, for the requests in flight).
      if (ctx.req.destroyed) return
    }
    const heads = new Map<string, Buffer[]>()
    const form = formidable({
      uploadDir: opts.uploadDir,
      maxFileSize: 200 * 1024 * 1024,
      ...(opts.keepHead ? { filename: () => randomUUID(), fileWriteStreamHandler: headKeeping(heads) } : {}),
    })
    const [, files] = await form.parse(ctx.req)
    const file: UploadedFile | undefined = Object.values(files).flat()[0]
    if (file && opts.keepHead) file.head = Buffer.concat(heads.get(file.filepath) ?? [])
    if (!file) {
      ctx.status = 400
      return
    }
    try {
      await opts.handle(ctx, file, caller)
    } finally {
      if (!file.moved) await rm(file.filepath, { force: true })
    }
  })
  const server = app.listen(Number(process.env.BENCH_PORT), '127.0.0.1')
  const stop = async () => {
    // Requests the load generator left in flight finish before the pool and queues close under them.
    server.close()
    await requests.drained()
    await opts.close()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

/** formidable's file write stream, keeping the first SNIFF_HEAD_BYTES written to it per path in `heads`. */
function headKeeping(heads: Map<string, Buffer[]>) {
  return (file?: unknown) => {
    const filepath = (file as { filepath: string }).filepath
    const stream = createWriteStream(filepath, { flags: 'wx' })
    const chunks: Buffer[] = []
    heads.set(filepath, chunks)
    let kept = 0
    const write = stream.write.bind(stream) as (chunk: Buffer, cb?: (err?: Error | null) => void) => boolean
    stream.write = ((chunk: Buffer, cb?: (err?: Error | null) => void) => {
      if (kept < SNIFF_HEAD_BYTES) {
        const part = chunk.subarray(0, SNIFF_HEAD_BYTES - kept)
        chunks.push(part)
        kept += part.length
      }
      return write(chunk, cb)
    }) as typeof stream.write
    return stream
  }
}
