import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Koa from 'koa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reviewDesk } from './review-desk.ts'

// DESIGN (Review desk): the web desk at /review works offline, from its built files only, under
// `Content-Security-Policy: default-src 'self'` (no inline script, no other origin).
describe('review desk files', () => {
  let base = ''
  let missing = ''
  const servers: ReturnType<Koa['listen']>[] = []
  const serve = async (dir: string) => {
    const app = new Koa()
    app.use(reviewDesk({ dir }))
    app.use((ctx) => {
      ctx.body = 'next'
    })
    const server = app.listen(0, '127.0.0.1')
    servers.push(server)
    await new Promise((resolve) => server.once('listening', resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quire-desk-'))
    await mkdir(path.join(dir, 'assets'))
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/review/assets/desk.js">')
    await writeFile(path.join(dir, 'assets', 'desk.js'), 'export {}')
    await writeFile(path.join(dir, 'assets', 'desk.css'), 'body{}')
    base = await serve(dir)
    missing = await serve(path.join(dir, 'nosuch'))
  })
  afterAll(() => {
    for (const s of servers) s.close()
  })

  it("serves the page and its two assets with Content-Security-Policy: default-src 'self'", async () => {
    for (const [p, type] of [
      ['/review', 'text/html'],
      ['/review/', 'text/html'],
      ['/review/assets/desk.js', 'text/javascript'],
      ['/review/assets/desk.css', 'text/css'],
    ] as const) {
      const res = await fetch(base + p)
      expect(res.status, p).toBe(200)
      expect(res.headers.get('content-type')).toContain(type)
      expect(res.headers.get('content-security-policy')).toBe("default-src 'self'")
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    }
  })

  it('answers 404 for any other path under /review (no path walks out of the build), 405 for writes, and leaves other paths alone', async () => {
    for (const p of ['/review/assets/../index.html', '/review/assets/other.js', '/review/x', '/review/assets/%2e%2e/x'])
      expect((await fetch(base + p)).status, p).toBe(404)
    expect((await fetch(`${base}/review`, { method: 'POST' })).status).toBe(405)
    expect(await (await fetch(`${base}/reviewer`)).text()).toBe('next')
  })

  it('says what to run when the desk was not built (503)', async () => {
    const res = await fetch(`${missing}/review`)
    expect(res.status).toBe(503)
    expect(await res.text()).toContain('npm run build')
  })
})
