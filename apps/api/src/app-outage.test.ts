import type { AddressInfo } from 'node:net'
import { createPrisma } from '@quire/db'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from './app.ts'
import { config } from './config.ts'
import { testAppDeps } from './http/app-deps.test-helper.ts'

const CLOSED_PORT = 1 // nothing listens on port 1
let base: string
let close: () => Promise<void>

beforeAll(async () => {
  const db = createPrisma(`postgresql://postgres@127.0.0.1:${CLOSED_PORT}/quire`)
  const redis = new Redis(`redis://127.0.0.1:${CLOSED_PORT}`, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  })
  redis.on('error', () => {})
  const deps = testAppDeps({
    db,
    config: { enforceApiContract: true },
    pingRedis: () => redis.ping(),
    redisDown: () => redis.status !== 'ready',
  })
  const server = createApp(deps).listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = async () => {
    await new Promise((r) => server.close(r))
    await db.$disconnect()
    redis.disconnect()
  }
})
afterAll(() => close())

// Generous timeouts: connection attempts to a closed port are quick, but this machine may be busy.
describe('while PostgreSQL and Redis are down', { timeout: 30_000 }, () => {
  it('/healthz (liveness) answers 200', async () => {
    const res = await fetch(`${base}/healthz`)
    expect(res.status).toBe(200)
  })

  it('/readyz answers 503 naming PostgreSQL and Redis', async () => {
    const res = await fetch(`${base}/readyz`)
    expect(res.status).toBe(503)
    const body = (await res.json()) as { error: string; details: { checks: Record<string, string> } }
    expect(body.error).toBe('SERVICE_UNAVAILABLE')
    expect(body.details.checks).toMatchObject({ postgresql: 'unreachable', redis: 'unreachable' })
  })

  it.each([
    ['GET', '/v1/jobs', { 'X-API-Key': 'qk_whatever' }],
    ['GET', '/admin/v1/workspaces/ws_1', { Authorization: `Bearer ${config.adminToken}` }],
    ['GET', '/v1/openapi.json', { 'X-API-Key': 'qk_whatever' }],
  ])('%s %s answers 503 SERVICE_UNAVAILABLE with Retry-After and no internals', async (method, path, headers) => {
    const res = await fetch(base + path, { method, headers })
    expect(res.status).toBe(503)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) })
    expect(text).not.toMatch(/prisma|127\.0\.0\.1|ECONNREFUSED|\.ts:/i)
  })
})
