// The shell every bare submit-side app of the bench shares (the bare app, the rows reference, the domain reference):
// a Koa app with no framework around it that answers /healthz, parses a POST's multipart body to a temporary file
// (formidable, as Quire does), hands the file to the side's own `handle` and removes it afterwards; on SIGTERM or
// SIGINT it lets the requests in flight finish, then closes the side's connections and exits.
import { mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import formidable from 'formidable'
import Koa from 'koa'
import { trackRequests } from './in-flight.ts'

export type UploadedFile = { filepath: string; originalFilename: string | null; size: number }

export function serveUploadApp<Caller>(opts: {
  uploadDir: string
  /** Runs before the body is read (the API checks the key there); null answers 401. */
  authorize?: (ctx: Koa.Context) => Promise<Caller | null>
  handle: (ctx: Koa.Context, file: UploadedFile, caller: Caller | undefined) => Promise<void>
  /** Closes the side's pools and queues once no request is in flight. */
  close: () => Promise<void>
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
    const form = formidable({ uploadDir: opts.uploadDir, maxFileSize: 200 * 1024 * 1024 })
    const [, files] = await form.parse(ctx.req)
    const file = Object.values(files).flat()[0]
    if (!file) {
      ctx.status = 400
      return
    }
    try {
      await opts.handle(ctx, file, caller)
    } finally {
      await rm(file.filepath, { force: true })
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
