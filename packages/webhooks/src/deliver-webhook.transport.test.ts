import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { startHttpsReceiver, type HttpsReceiver } from '@quire/testing'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deliverWebhook } from './deliver-webhook.transport.ts'
import { createGuardedDispatcher } from './guarded-dispatcher.transport.ts'

const body = '{"id":"dlv_1","type":"job.failed","timestamp":1700000000,"job_id":"job_1","data":{"note":"Grüße"}}'
const timing = { timeoutMs: 400, connectTimeoutMs: 400 }

describe('deliverWebhook against a real local HTTPS receiver', () => {
  let receiver: HttpsReceiver
  let trusted: Agent

  beforeAll(async () => {
    receiver = await startHttpsReceiver({
      respond: ({ path }) => {
        if (path.startsWith('/fail')) return { status: 500, body: 'boom' }
        if (path.startsWith('/redirect')) return { status: 302, headers: { location: '/followed' } }
        if (path.startsWith('/hang')) return { status: 200, delayMs: 60_000 }
        if (path.startsWith('/big')) return { status: 200, body: 'x'.repeat(2 * 1024 * 1024) }
        if (path.startsWith('/accepted')) return { status: 202 }
        return { status: 200, body: 'ok' }
      },
    })
    // The receiver listens on loopback, so tests opt in to private targets.
    trusted = createGuardedDispatcher({ allowPrivate: true, connectTimeoutMs: 2_000, ca: receiver.ca })
  })

  afterAll(async () => {
    await trusted?.close()
    await receiver?.close()
  })

  const at = (path: string) => `${receiver.origin}${path}`
  const countAt = (path: string) => receiver.received.filter((r) => r.path === path).length

  it('delivers the exact body with JSON content type, user agent and caller headers; 2xx is success', async () => {
    const result = await deliverWebhook({
      ...timing,
      url: at('/ok?case=headers'),
      body,
      headers: { 'X-Service-Signature': 'sha256=abc', 'X-Service-Delivery-Id': 'dlv_1', 'Content-Type': 'text/plain' },
      dispatcher: trusted,
    })
    expect(result).toMatchObject({ ok: true, statusCode: 200 })
    expect(result.error).toBeUndefined()
    expect(result.durationMs).toBeGreaterThanOrEqual(0)

    const seen = await receiver.waitFor((r) => r.path === '/ok?case=headers')
    expect(seen.method).toBe('POST')
    expect(seen.rawBody.equals(Buffer.from(body, 'utf8'))).toBe(true)
    expect(seen.headers['content-type']).toBe('application/json')
    expect(seen.headers['user-agent']).toBe('Service-Webhook/1.0')
    expect(seen.headers['x-service-signature']).toBe('sha256=abc')
    expect(seen.headers['x-service-delivery-id']).toBe('dlv_1')
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(body)))
  })

  it('treats any 2xx as success', async () => {
    expect(
      await deliverWebhook({ ...timing, url: at('/accepted'), body, headers: {}, dispatcher: trusted }),
    ).toMatchObject({
      ok: true,
      statusCode: 202,
    })
  })

  it('reports a 500 as a failure with its status code', async () => {
    const result = await deliverWebhook({ ...timing, url: at('/fail'), body, headers: {}, dispatcher: trusted })
    expect(result).toMatchObject({ ok: false, statusCode: 500, errorKind: 'http_status' })
    expect(result.error).toContain('500')
  })

  it('treats a 302 as a failure and does not follow it', async () => {
    const result = await deliverWebhook({ ...timing, url: at('/redirect'), body, headers: {}, dispatcher: trusted })
    expect(result).toMatchObject({ ok: false, statusCode: 302, errorKind: 'redirect' })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(countAt('/redirect')).toBe(1)
    expect(countAt('/followed')).toBe(0)
  })

  it('times out on a receiver that never answers', async () => {
    const result = await deliverWebhook({ ...timing, url: at('/hang'), body, headers: {}, dispatcher: trusted })
    expect(result).toMatchObject({ ok: false, errorKind: 'timeout' })
    expect(result.statusCode).toBeUndefined()
    expect(result.durationMs).toBeGreaterThanOrEqual(300)
    expect(result.durationMs).toBeLessThan(5_000)
    expect(countAt('/hang')).toBe(1)
  })

  it('reads at most a capped amount of a large response body and still succeeds', async () => {
    const result = await deliverWebhook({
      ...timing,
      url: at('/big'),
      body,
      headers: {},
      dispatcher: trusted,
      maxResponseBytes: 1024,
    })
    expect(result).toMatchObject({ ok: true, statusCode: 200 })
  })

  it('reports connection refused', async () => {
    const port = await freePort()
    const result = await deliverWebhook({
      ...timing,
      url: `https://127.0.0.1:${port}/hook`,
      body,
      headers: {},
      dispatcher: trusted,
    })
    expect(result).toMatchObject({ ok: false, errorKind: 'connection_refused' })
    expect(result.statusCode).toBeUndefined()
  })

  it('reports a connect timeout when the TLS handshake never completes', async () => {
    const { server, port, sockets } = await startSilentTcpServer()
    try {
      const dispatcher = createGuardedDispatcher({ allowPrivate: true, connectTimeoutMs: 300 })
      const result = await deliverWebhook({
        ...timing,
        timeoutMs: 5_000,
        url: `https://127.0.0.1:${port}/`,
        body,
        headers: {},
        dispatcher,
      })
      await dispatcher.destroy()
      expect(result).toMatchObject({ ok: false, errorKind: 'connect_timeout' })
      expect(result.durationMs).toBeLessThan(4_000)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('gives up at the backstop deadline (connect + response timeouts) when the dispatcher never connects', async () => {
    // A dispatcher whose connector never answers: neither undici's connect timeout nor its response timeouts apply.
    const stuck = new Agent({ connect: () => {} })
    try {
      const result = await deliverWebhook({
        timeoutMs: 200,
        connectTimeoutMs: 200,
        url: at('/ok?case=stuck'),
        body,
        headers: {},
        dispatcher: stuck,
      })
      expect(result).toMatchObject({ ok: false, errorKind: 'timeout' })
      expect(result.statusCode).toBeUndefined()
      expect(result.durationMs).toBeGreaterThanOrEqual(390)
      expect(result.durationMs).toBeLessThan(2_000)
      expect(countAt('/ok?case=stuck')).toBe(0)
    } finally {
      await stuck.destroy()
    }
  })

  it('refuses an untrusted certificate', async () => {
    const untrusting = createGuardedDispatcher({ allowPrivate: true, connectTimeoutMs: 2_000 })
    const result = await deliverWebhook({
      ...timing,
      url: at('/ok?case=untrusted'),
      body,
      headers: {},
      dispatcher: untrusting,
    })
    await untrusting.close()
    expect(result).toMatchObject({ ok: false, errorKind: 'tls_error' })
    expect(countAt('/ok?case=untrusted')).toBe(0)
  })

  it('connects by host name when the certificate names it (localhost SAN)', async () => {
    const url = at('/ok?case=localhost').replace('127.0.0.1', 'localhost')
    expect(await deliverWebhook({ ...timing, url, body, headers: {}, dispatcher: trusted })).toMatchObject({ ok: true })
  })

  it('never throws on an invalid URL or header value', async () => {
    expect(await deliverWebhook({ ...timing, url: 'not a url', body, headers: {}, dispatcher: trusted })).toMatchObject(
      {
        ok: false,
        errorKind: 'invalid_request',
      },
    )
    expect(
      await deliverWebhook({
        ...timing,
        url: at('/ok?case=inj'),
        body,
        headers: { 'X-A': 'a\r\nX-B: b' },
        dispatcher: trusted,
      }),
    ).toMatchObject({ ok: false, errorKind: 'invalid_request' })
    expect(countAt('/ok?case=inj')).toBe(0)
  })

  describe('connect-time address guard (DNS rebinding)', () => {
    it.each([
      ['an IPv4 loopback literal', (origin: string) => `${origin}/ok?case=guard-v4`],
      [
        'a host name resolving to loopback',
        (origin: string) => `${origin.replace('127.0.0.1', 'localhost')}/ok?case=guard-name`,
      ],
    ])('refuses %s before any byte is sent', async (_label, makeUrl) => {
      const guarded = createGuardedDispatcher({ allowPrivate: false, connectTimeoutMs: 2_000, ca: receiver.ca })
      const url = makeUrl(receiver.origin)
      const result = await deliverWebhook({ ...timing, url, body, headers: {}, dispatcher: guarded })
      await guarded.close()
      expect(result).toMatchObject({ ok: false, errorKind: 'blocked_address' })
      expect(receiver.received.some((r) => url.endsWith(r.path))).toBe(false)
    })

    it('refuses an IPv6 loopback literal', async () => {
      const guarded = createGuardedDispatcher({ allowPrivate: false, connectTimeoutMs: 2_000 })
      const result = await deliverWebhook({
        ...timing,
        url: `https://[::1]:${receiver.port}/x`,
        body,
        headers: {},
        dispatcher: guarded,
      })
      await guarded.close()
      expect(result).toMatchObject({ ok: false, errorKind: 'blocked_address' })
    })

    it('guards by default when no dispatcher is passed', async () => {
      const result = await deliverWebhook({ ...timing, url: at('/ok?case=default'), body, headers: {} })
      expect(result).toMatchObject({ ok: false, errorKind: 'blocked_address' })
      expect(countAt('/ok?case=default')).toBe(0)
    })
  })
})

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

// Accepts TCP connections and never speaks, so a TLS handshake stalls.
async function startSilentTcpServer(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, sockets }
}
