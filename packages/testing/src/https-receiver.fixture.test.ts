import { request } from 'node:https'
import { X509Certificate } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { startHttpsReceiver, type HttpsReceiver } from './https-receiver.fixture.ts'
import { generateLocalhostCert } from './self-signed-cert.fixture.ts'

type Reply = { status: number; body: string }

function post(url: string, ca: string, body: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

describe('startHttpsReceiver', () => {
  let receiver: HttpsReceiver | undefined
  afterEach(async () => {
    await receiver?.close()
    receiver = undefined
  })

  it('serves https on 127.0.0.1 with a certificate for 127.0.0.1 and localhost', async () => {
    receiver = await startHttpsReceiver()
    expect(receiver.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/hook$/)
    const cert = new X509Certificate(receiver.ca)
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1')
    expect(cert.checkHost('localhost')).toBe('localhost')
  })

  it('records the exact body, headers and path, and answers 200 by default', async () => {
    receiver = await startHttpsReceiver()
    const body = Buffer.from('{"a":"ü"}', 'utf8')
    const reply = await post(receiver.url, receiver.ca, body.toString('utf8'), { 'X-Test': 'yes' })
    expect(reply.status).toBe(200)
    const seen = await receiver.waitFor((r) => r.path === '/hook')
    expect(seen.rawBody.equals(body)).toBe(true)
    expect(seen.headers['x-test']).toBe('yes')
    expect(seen.method).toBe('POST')
    expect(seen.at).toBeLessThanOrEqual(Date.now())
    expect(receiver.received).toHaveLength(1)
  })

  it('answers as respond decides, including status, headers and body', async () => {
    receiver = await startHttpsReceiver({
      respond: ({ path, rawBody }) =>
        path === '/teapot' ? { status: 418, body: `got ${rawBody.length}` } : { status: 204 },
    })
    expect(await post(`${receiver.origin}/teapot`, receiver.ca, '12345')).toEqual({ status: 418, body: 'got 5' })
    expect((await post(`${receiver.origin}/other`, receiver.ca, '')).status).toBe(204)
  })

  it('holds the answer for delayMs', async () => {
    receiver = await startHttpsReceiver({ respond: () => ({ status: 200, delayMs: 150 }) })
    const started = Date.now()
    await post(receiver.url, receiver.ca, '{}')
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
  })

  it('is refused by clients that do not trust its certificate', async () => {
    receiver = await startHttpsReceiver()
    const stranger = await generateLocalhostCert()
    await expect(post(receiver.url, stranger.cert, '{}')).rejects.toThrow()
    expect(receiver.received).toHaveLength(0)
  })

  it('serves a caller-provided certificate', async () => {
    const cert = await generateLocalhostCert()
    receiver = await startHttpsReceiver({ cert })
    expect(receiver.ca).toBe(cert.cert)
    expect((await post(receiver.url, cert.cert, '{}')).status).toBe(200)
  })

  it('closes promptly even while a response is being held back', async () => {
    receiver = await startHttpsReceiver({ respond: () => ({ status: 200, delayMs: 60_000 }) })
    const pending = post(receiver.url, receiver.ca, '{}').catch((err: Error) => err)
    await receiver.waitFor(() => true, 2_000)
    const started = Date.now()
    await receiver.close()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(await pending).toBeInstanceOf(Error)
  })

  it('waitFor rejects when nothing matching arrives in time', async () => {
    receiver = await startHttpsReceiver()
    await expect(receiver.waitFor((r) => r.path === '/never', 100)).rejects.toThrow(/timed out/)
  })
})
