// HTTP/1.1 over a raw TCP socket, so a test sends exactly the bytes it means (malformed, truncated or never-ending
// bodies) and sees exactly what comes back. Used by tests/blackbox/bad-input.test.ts and the API's multipart unit tests.
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { assertContract } from './contract.ts'

export type RawResponse = {
  /** 0 when no status line arrived before the connection ended. */
  status: number
  headers: Record<string, string>
  body: string
  json: any
  /** Bytes of the request body this client managed to write before it stopped (or the server closed). */
  bodyBytesWritten: number
  /** How the connection ended: the server closed it, reset it, or the response was complete and we closed it. */
  ended: 'server-closed' | 'reset' | 'complete'
}

export type RawRequestOptions = {
  host?: string
  port: number
  /** Request line and headers, without the blank line; `\r\n` is added between lines. */
  head: string[]
  /** The body, sent as given (chunks are written in order). */
  body?: Buffer | Buffer[]
  /**
   * A body produced on demand: called until it returns null, each chunk written with backpressure. Stops as soon as
   * a response has arrived, like a client that reads early responses.
   */
  stream?: () => Buffer | null
  /** After writing `body`, end our side (FIN) without waiting; 'destroy' drops the connection abruptly. */
  closeAfterBody?: 'end' | 'destroy'
  timeoutMs?: number
  /**
   * Check the response against the OpenAPI document the server itself serves (tests/blackbox/contract.ts), as the
   * black-box client does for every call: method and path from the request line, the form from its X-API-Key. Only
   * a complete response has its body checked; a status line without the whole body, its status only; no answer at
   * all (a client that left first), nothing. Off for servers that are not the Quire API (the multipart unit tests).
   */
  contract?: boolean
}

/** One request over a raw socket; rejects when `contract` is set and the answer does not match the document. */
export async function rawRequest(opts: RawRequestOptions): Promise<RawResponse> {
  const res = await exchange(opts)
  if (opts.contract && res.status > 0) {
    const [method = '', target = ''] = (opts.head[0] ?? '').split(' ')
    const header = (name: string) =>
      opts.head
        .slice(1)
        .find((l) => l.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim()
    const complete = res.ended === 'complete'
    await assertContract(
      `http://${opts.host ?? '127.0.0.1'}:${opts.port}`,
      { method, path: target, key: header('x-api-key') || undefined },
      {
        status: res.status,
        body: res.json ?? res.body,
        contentType: complete ? (res.headers['content-type'] ?? null) : null,
      },
    )
  }
  return res
}

function exchange(opts: RawRequestOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: opts.host ?? '127.0.0.1', port: opts.port })
    const chunks: Buffer[] = []
    let bodyBytesWritten = 0
    let responded = false
    let done = false
    const timer = setTimeout(() => finish('reset', new Error('raw request timed out')), opts.timeoutMs ?? 30_000)

    const parse = (ended: RawResponse['ended']): RawResponse => {
      const raw = Buffer.concat(chunks).toString('latin1')
      const sep = raw.indexOf('\r\n\r\n')
      const headText = sep >= 0 ? raw.slice(0, sep) : raw
      const lines = headText.split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0)
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':')
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
      }
      const body = sep >= 0 ? Buffer.from(raw.slice(sep + 4), 'latin1').toString('utf8') : ''
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {}
      return { status, headers, body, json, bodyBytesWritten, ended }
    }

    const complete = () => {
      const raw = Buffer.concat(chunks)
      const sep = raw.indexOf('\r\n\r\n')
      if (sep < 0) return false
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(raw.subarray(0, sep).toString('latin1'))
      return len ? raw.length - sep - 4 >= Number(len[1]) : false
    }

    function finish(ended: RawResponse['ended'], err?: Error) {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (err && chunks.length === 0) reject(err)
      else resolve(parse(ended))
    }

    socket.on('data', (d) => {
      chunks.push(d)
      responded = true
      if (complete()) finish('complete')
    })
    socket.on('end', () => finish('server-closed'))
    socket.on('error', (err) => finish('reset', err))
    socket.on('close', () => finish('server-closed'))

    socket.on('connect', async () => {
      socket.write(`${opts.head.join('\r\n')}\r\n\r\n`)
      const body = opts.body === undefined ? [] : Array.isArray(opts.body) ? opts.body : [opts.body]
      for (const b of body) {
        if (done) return
        bodyBytesWritten += b.length
        if (!socket.write(b)) {
          await new Promise<void>((r) => {
            const go = () => {
              socket.off('drain', go)
              socket.off('close', go)
              r()
            }
            socket.on('drain', go)
            socket.on('close', go)
          })
        }
      }
      if (opts.stream) {
        while (!done && !responded) {
          const b = opts.stream()
          if (b === null) break
          bodyBytesWritten += b.length
          if (!socket.write(b)) {
            await new Promise<void>((r) => {
              const go = () => {
                socket.off('drain', go)
                socket.off('close', go)
                r()
              }
              socket.on('drain', go)
              socket.on('close', go)
            })
          } else {
            // Loopback buffers take tens of MB before a write reports backpressure; without a turn of the event loop
            // here the answer would sit unread while the server, done lingering, resets the connection under it.
            await new Promise<void>((r) => setImmediate(r))
          }
        }
      }
      if (opts.closeAfterBody === 'end') socket.end()
      else if (opts.closeAfterBody === 'destroy') finish('reset')
    })
  })
}

/** A multipart body built from parts given as raw header lines and content. */
export function multipartBytes(
  boundary: string,
  parts: { headers: string[]; content: string | Buffer }[],
  close = true,
): Buffer {
  const out: Buffer[] = []
  for (const p of parts) {
    out.push(Buffer.from(`--${boundary}\r\n${p.headers.map((h) => `${h}\r\n`).join('')}\r\n`, 'latin1'))
    out.push(typeof p.content === 'string' ? Buffer.from(p.content, 'utf8') : p.content)
    out.push(Buffer.from('\r\n'))
  }
  if (close) out.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(out)
}

/**
 * The most request bytes that can sit in kernel buffers on a loopback connection without the server reading any:
 * the receiver's TCP buffer grows (autotuning) up to tcp_rmem's maximum, the sender's up to tcp_wmem's. A client
 * "writes" that much before the server has read a byte, so a bound on bytes written must allow for it; on Linux it
 * is read from the machine (here 32 MB + 4 MB), elsewhere Linux's usual maxima are assumed.
 */
export function loopbackBufferBytes(): number {
  const max = (file: string, fallback: number) => {
    try {
      const n = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2])
      return Number.isFinite(n) && n > 0 ? n : fallback
    } catch {
      return fallback
    }
  }
  return max('/proc/sys/net/ipv4/tcp_rmem', 6 * 1024 * 1024) + max('/proc/sys/net/ipv4/tcp_wmem', 4 * 1024 * 1024)
}
