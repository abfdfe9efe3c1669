import { createBullBoard } from '@bull-board/api'
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter'
import { KoaAdapter } from '@bull-board/koa'
import type { QueueSet } from '@quire/queues'
import type { Middleware } from 'koa'
import { createHash, timingSafeEqual } from 'node:crypto'

const BASE = '/admin/queues'

const same = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())

/**
 * The queue dashboard (bull-board) behind the admin token: `Authorization: Bearer <token>`, or basic auth with the
 * token as password so a browser can open it.
 */
export function queueDashboard(opts: { queues: QueueSet; adminToken: string }): Middleware {
  const serverAdapter = new KoaAdapter()
  serverAdapter.setBasePath(BASE)
  createBullBoard({ queues: opts.queues.all().map((q) => new BullMQAdapter(q)), serverAdapter })
  const plugin = serverAdapter.registerPlugin() as unknown as Middleware
  return async (ctx, next) => {
    if (!ctx.path.startsWith(BASE)) return next()
    const header = ctx.get('Authorization')
    let token = ''
    if (header.startsWith('Bearer ')) token = header.slice(7)
    else if (header.startsWith('Basic ')) token = Buffer.from(header.slice(6), 'base64').toString().split(':').slice(1).join(':')
    if (!token || !same(token, opts.adminToken)) {
      ctx.status = 401
      ctx.set('WWW-Authenticate', 'Basic realm="Quire queues"')
      ctx.body = { error: { code: 'unauthorized', message: 'admin token required' } }
      return
    }
    return plugin(ctx, next)
  }
}
