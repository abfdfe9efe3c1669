// The origin of the absolute URLs in answers (Form B `status_url`, `result_url`) when QUIRE_PUBLIC_URL is unset: the
// request's own scheme and host, and X-Forwarded-Proto / X-Forwarded-Host only when QUIRE_TRUST_PROXY says a proxy
// in front sets them. The real app, with one route of its own answering baseUrl.
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createApp } from './app.ts'
import { baseUrl } from './http/context.ts'
import { defineRoute } from './routes/route.ts'
import { testAppDeps } from './http/app-deps.test-helper.ts'

const ORIGIN_ROUTE = defineRoute({
  method: 'get',
  path: '/origin',
  operationId: 'origin',
  tag: 'Operations',
  summary: 'The origin answers use',
  usesDependencies: false,
  auth: 'none',
  responses: { '200': { description: 'The origin.', name: 'Origin', schema: z.object({ origin: z.string() }) } },
  handle: async ({ ctx, deps }) => ({ status: 200, body: { origin: baseUrl(ctx, deps) } }),
})

const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers) await close()
})

async function serve(trustProxy: boolean) {
  const deps = testAppDeps({ config: { publicUrl: undefined, trustProxy } })
  const server = createApp(deps, [], [ORIGIN_ROUTE]).listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  closers.push(() => new Promise((r) => server.close(() => r())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const FORWARDED = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'elsewhere.example' }
const originOf = async (base: string, headers: Record<string, string> = {}) =>
  ((await (await fetch(`${base}/origin`, { headers })).json()) as { origin: string }).origin

describe('the origin of absolute URLs without QUIRE_PUBLIC_URL', () => {
  it('by default a client’s X-Forwarded-* headers are ignored: the request’s own scheme and host', async () => {
    const base = await serve(false)
    expect(await originOf(base, FORWARDED)).toBe(base)
  })
  it('with QUIRE_TRUST_PROXY the proxy’s X-Forwarded-Proto and X-Forwarded-Host decide it', async () => {
    const base = await serve(true)
    expect(await originOf(base, FORWARDED)).toBe('https://elsewhere.example')
    expect(await originOf(base)).toBe(base)
  })
})
