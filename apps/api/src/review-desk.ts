import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Middleware } from 'koa'

const BASE = '/review'
/** The desk loads only its own files: no inline script or style, no other origin (DESIGN, "Review desk"). */
const CSP = "default-src 'self'"
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
}

/** Where `npm run build` (apps/review-desk/build.mjs) puts the desk. */
export const reviewDeskDir = (): string =>
  path.join(path.dirname(createRequire(import.meta.url).resolve('@quire/review-desk/package.json')), 'dist')

/**
 * Serves the review desk at /review (index.html) and /review/assets/*, read once from the built `dir` and kept in
 * memory. The page holds no secret: it signs in against the API with a key the reviewer types. A desk that was not
 * built answers 503 with what to run.
 */
export function reviewDesk(opts: { dir?: string } = {}): Middleware {
  const dir = opts.dir ?? reviewDeskDir()
  const files = new Map<string, Promise<Buffer | null>>()
  const load = (relative: string) => {
    let f = files.get(relative)
    if (!f) {
      f = readFile(path.join(dir, relative)).catch(() => null)
      files.set(relative, f)
    }
    return f
  }
  return async (ctx, next) => {
    if (ctx.path !== BASE && !ctx.path.startsWith(`${BASE}/`)) return next()
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405
      ctx.set('Allow', 'GET, HEAD')
      ctx.body = { error: { code: 'METHOD_NOT_ALLOWED', message: 'the review desk is read with GET' } }
      return
    }
    const rest = ctx.path.slice(BASE.length)
    const asset = /^\/assets\/(desk\.(?:js|css))$/.exec(rest)?.[1]
    if (!asset && rest !== '' && rest !== '/') {
      ctx.status = 404
      ctx.body = { error: { code: 'not_found', message: `no review desk file ${ctx.path}` } }
      return
    }
    const relative = asset ? `assets/${asset}` : 'index.html'
    const bytes = await load(relative)
    if (!bytes) {
      files.delete(relative)
      ctx.status = 503
      ctx.body = { error: { code: 'SERVICE_UNAVAILABLE', message: 'the review desk is not built: run npm run build' } }
      return
    }
    ctx.set('Content-Security-Policy', CSP)
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.set('Referrer-Policy', 'no-referrer')
    ctx.set('Cache-Control', asset ? 'no-cache' : 'no-store')
    ctx.type = TYPES[path.extname(relative)]!
    ctx.body = bytes
  }
}
