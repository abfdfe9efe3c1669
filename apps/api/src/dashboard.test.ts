import type { AddressInfo } from 'node:net'
import { createQueueSet } from '@quire/queues'
import { Redis } from 'ioredis'
import Koa from 'koa'
import { afterAll, describe, expect, it } from 'vitest'
import { queueDashboard } from './dashboard.ts'

// DESIGN (Robustness): internals (SQL, stack, file paths) go to the log; while a dependency is down, endpoints answer
// 503 SERVICE_UNAVAILABLE with Retry-After. bull-board answers its own failures with the error's stack.
describe('queue dashboard while the queue store is unreachable', () => {
  // Nothing listens on port 1, and the offline queue is off: every Redis command fails at once.
  const connection = new Redis({
    host: '127.0.0.1',
    port: 1,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  connection.on('error', () => {})
  const queues = createQueueSet({ connection, prefix: 'dashboard-test' })
  for (const q of queues.all()) q.on('error', () => {})
  const app = new Koa()
  app.use(queueDashboard({ queues, adminToken: 'token' }))
  const server = app.listen(0, '127.0.0.1')
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    connection.disconnect()
  })

  it("answers 503 SERVICE_UNAVAILABLE with Retry-After, never the error's stack or file paths", async () => {
    const { port } = server.address() as AddressInfo
    const res = await fetch(`http://127.0.0.1:${port}/admin/queues/api/queues`, {
      headers: { Authorization: 'Bearer token' },
    })
    const body = await res.text()
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(JSON.parse(body)).toMatchObject({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) })
    expect(body).not.toMatch(/node_modules|\bat \S+ \(|Error:/)
  })
})
