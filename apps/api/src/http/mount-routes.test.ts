import type { AddressInfo } from 'node:net'
import { DomainError } from '@quire/domain'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createApp } from '../app.ts'
import { defineRoute, type RouteSpec } from '../routes/route.ts'
import { testAppDeps } from './app-deps.test-helper.ts'

const routes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/t/declared',
    operationId: 'declared',
    tag: 'Operations',
    summary: 'declared',
    auth: 'none',
    responses: { '200': { description: 'ok', json: {} } },
    errors: ['not_found'],
    handle: async () => {
      throw new DomainError('not_found', 'declared error')
    },
  }),
  defineRoute({
    method: 'get',
    path: '/t/undeclared-code',
    operationId: 'undeclaredCode',
    tag: 'Operations',
    summary: 'undeclared code',
    auth: 'none',
    responses: { '200': { description: 'ok', json: {} } },
    handle: async () => {
      throw new DomainError('JOB_NOT_CANCELLABLE', 'not in the declaration')
    },
  }),
  defineRoute({
    method: 'get',
    path: '/t/undeclared-status',
    operationId: 'undeclaredStatus',
    tag: 'Operations',
    summary: 'undeclared status',
    auth: 'none',
    responses: { '200': { description: 'ok', json: {} } },
    handle: async () => ({ status: 201, body: { created: true } }),
  }),
  defineRoute<{ n: number }>({
    method: 'get',
    path: '/t/query',
    operationId: 'query',
    tag: 'Operations',
    summary: 'validated query',
    auth: 'none',
    query: { schema: z.object({ n: z.coerce.number().int().min(1) }) },
    responses: { '200': { description: 'ok', json: {} } },
    handle: async ({ query }) => ({ status: 200, body: { n: query.n } }),
  }),
]

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
})

async function serve(enforceApiContract: boolean) {
  const logged: string[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line).msg) })
  const deps = testAppDeps({ log, config: { enforceApiContract } })
  const server = createApp(deps, [], routes).listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  close = () => new Promise((r) => server.close(() => r()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const get = async (p: string) => {
    const res = await fetch(base + p)
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  return { get, logged, base }
}

describe('route declarations are enforced', () => {
  it('a declared error code passes through with its status and envelope', async () => {
    const { get, logged } = await serve(true)
    expect(await get('/t/declared')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } })
    expect(logged).not.toContain('response not declared by its route')
  })

  it('an undeclared error code is logged, and answered 500 when the contract is enforced', async () => {
    const { get, logged } = await serve(true)
    expect((await get('/t/undeclared-code')).status).toBe(500)
    expect(logged).toContain('response not declared by its route')
  })

  it('an undeclared success status likewise', async () => {
    const { get, logged } = await serve(true)
    expect((await get('/t/undeclared-status')).status).toBe(500)
    expect(logged).toContain('response not declared by its route')
  })

  it('without enforcement the answer stands but the drift is still logged', async () => {
    const { get, logged } = await serve(false)
    expect(await get('/t/undeclared-code')).toMatchObject({ status: 409, body: { error: 'JOB_NOT_CANCELLABLE' } })
    expect(logged).toContain('response not declared by its route')
  })

  it('queries are validated with the declared schema (400 INVALID_PARAMETER is implied by declaring one)', async () => {
    const { get, logged } = await serve(true)
    expect(await get('/t/query?n=3')).toEqual({ status: 200, body: { n: 3 } })
    expect(await get('/t/query?n=0')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER' } })
    // A repeated single-valued parameter is refused, not silently read as its first value.
    expect(await get('/t/query?n=3&n=4')).toMatchObject({ status: 400, body: { error: 'INVALID_PARAMETER' } })
    expect(logged).not.toContain('response not declared by its route')
  })

  it('a known path with another method is 405 METHOD_NOT_ALLOWED in the flat envelope, Allow naming its methods', async () => {
    const { base } = await serve(true)
    const res = await fetch(`${base}/t/declared`, { method: 'POST' })
    expect(res.status).toBe(405)
    // RFC 9110 §15.5.6: a 405 carries Allow.
    expect(res.headers.get('allow')).toMatch(/\bGET\b/)
    expect(await res.json()).toMatchObject({ error: 'METHOD_NOT_ALLOWED' })
  })

  it('a method the router does not know is 405 METHOD_NOT_ALLOWED too, with Allow', async () => {
    const { base } = await serve(true)
    const res = await fetch(`${base}/t/declared`, { method: 'PROPFIND' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toMatch(/\bGET\b/)
    expect(await res.json()).toMatchObject({ error: 'METHOD_NOT_ALLOWED' })
  })
})
