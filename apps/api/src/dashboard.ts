import { createBullBoard } from '@bull-board/api'
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter'
import { KoaAdapter } from '@bull-board/koa'
import type { QueueSet } from '@quire/queues'
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import { OUTAGE_RETRY_AFTER_S } from './http/body-errors.ts'
import { createHash, timingSafeEqual } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'

const BASE = '/admin/queues'

const same = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())

/**
 * The queue dashboard (bull-board) behind the admin token: `Authorization: Bearer <token>`, or basic auth with the
 * token as password so a browser can open it.
 */
export function queueDashboard(opts: { queues: QueueSet; adminToken: string; log?: Logger }): Middleware {
  const log = opts.log
  const serverAdapter = new KoaAdapter()
  serverAdapter.setBasePath(BASE)
  createBullBoard({
    queues: opts.queues.all().map((q) => new BullMQAdapter(q, { displayName: plainName(q.name), description: q.name })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Quire queues' } },
  })
  const plugin = serverAdapter.registerPlugin() as unknown as Middleware
  return async (ctx, next) => {
    if (!ctx.path.startsWith(BASE)) return next()
    const header = ctx.get('Authorization')
    let token = ''
    if (header.startsWith('Bearer ')) token = header.slice(7)
    else if (header.startsWith('Basic '))
      token = Buffer.from(header.slice(6), 'base64').toString().split(':').slice(1).join(':')
    if (!token || !same(token, opts.adminToken)) {
      ctx.status = 401
      ctx.set('WWW-Authenticate', 'Basic realm="Quire queues"')
      ctx.body = { error: { code: 'unauthorized', message: 'admin token required' } }
      return
    }
    if (ctx.path.startsWith(STATIC) && !(await isStaticFile(ctx.path.slice(STATIC.length)))) {
      // bull-board would fall through to its page renderer and fail with a 500 for an asset it does not have.
      ctx.status = 404
      ctx.body = { error: 'NOT_FOUND', message: 'no such dashboard asset', timestamp: new Date().toISOString() }
      return
    }
    // What bull-board has no route for ends here as 404. Passing the app's `next` on would let its error handler
    // turn the app's own 404/405 into a 500.
    let unmatched = false
    await plugin(ctx, async () => {
      unmatched = true
    })
    if (unmatched) {
      ctx.status = 404
      ctx.body = { error: 'NOT_FOUND', message: 'no such dashboard page', timestamp: new Date().toISOString() }
    } else if (ctx.status >= 500) {
      // bull-board answers its own failures (Redis unreachable) with the error's stack in the body: internals go to
      // the log, the client gets the outage answer every other endpoint gives.
      log?.warn({ path: ctx.path, status: ctx.status, body: ctx.body }, 'queue dashboard request failed')
      ctx.status = 503
      ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_S))
      ctx.body = {
        error: 'SERVICE_UNAVAILABLE',
        message: 'the queue store is unavailable; retry shortly',
        timestamp: new Date().toISOString(),
      }
    }
  }
}

const STATIC = `${BASE}/static/`
// The directory bull-board's UI serves its assets from (the package's dist/static).
const STATIC_DIR = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json')),
  'dist',
  'static',
)

async function isStaticFile(relative: string): Promise<boolean> {
  const full = path.resolve(STATIC_DIR, relative)
  if (!full.startsWith(STATIC_DIR + path.sep)) return false
  return stat(full).then(
    (s) => s.isFile(),
    () => false,
  )
}

/** Queue names as an operator reads them: `stage-split_classify` → "Split and classify stage". */
export function plainName(queue: string): string {
  const names: Record<string, string> = {
    'webhook-fanout': 'Webhook fan-out (events to deliveries)',
    'webhook-delivery': 'Webhook deliveries',
  }
  if (names[queue]) return names[queue]
  const stage = queue.replace(/^stage-/, '')
  const words = stage === 'split_classify' ? 'split and classify' : stage.replace(/_/g, ' ')
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} stage`
}
