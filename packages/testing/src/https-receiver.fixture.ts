import { createServer, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { generateLocalhostCert, type SelfSignedCert } from './self-signed-cert.fixture.ts'
import { waitFor } from './wait-for.util.ts'

/** One request as the receiver saw it. */
export type ReceivedRequest = {
  /** Header names are lower-case (node's `req.headers`). */
  headers: Record<string, string | string[]>
  /** The exact body bytes received. */
  rawBody: Buffer
  /** Request target, e.g. `/hook?x=1`. */
  path: string
  method: string
  /** Epoch milliseconds when the body was complete. */
  at: number
}

/** What the receiver answers; `delayMs` holds the answer back (a large value simulates a hung receiver). */
export type ReceiverResponse = {
  status: number
  delayMs?: number
  headers?: Record<string, string>
  body?: string
}

/** Options of {@link startHttpsReceiver}. */
export type HttpsReceiverOptions = {
  /** Decides each answer. Default: `{ status: 200 }`. */
  respond?: (req: Omit<ReceivedRequest, 'at'>) => ReceiverResponse | Promise<ReceiverResponse>
  /** Largest body kept, in bytes; larger requests get 413 and are still recorded (truncated). Default 10 MiB. */
  maxBodyBytes?: number
  /** Certificate to serve. Default: one generated on first use and shared by the process's receivers. */
  cert?: SelfSignedCert
}

/** A running local HTTPS receiver. */
export type HttpsReceiver = {
  /** `https://127.0.0.1:<port>/hook` */
  url: string
  /** `https://127.0.0.1:<port>` */
  origin: string
  port: number
  /** PEM certificate to trust (pass as `ca`); it is also the server certificate. */
  ca: string
  /** Requests in arrival order. */
  received: ReceivedRequest[]
  /** Resolves with the first received request matching `predicate` (already received ones count). */
  waitFor: (predicate?: (req: ReceivedRequest) => boolean, timeoutMs?: number) => Promise<ReceivedRequest>
  /** Stops listening and destroys open connections, including ones held by `delayMs`. */
  close: () => Promise<void>
}

/**
 * Starts a real `node:https` server on 127.0.0.1 with a self-signed certificate generated at
 * runtime. Transport-level only: it records requests and answers as `respond` says; it does not
 * verify signatures.
 */
export async function startHttpsReceiver(opts: HttpsReceiverOptions = {}): Promise<HttpsReceiver> {
  const { cert, key } = opts.cert ?? (await sharedCert())
  const maxBodyBytes = opts.maxBodyBytes ?? 10 * 1024 * 1024
  const respond = opts.respond ?? (() => ({ status: 200 }))
  const received: ReceivedRequest[] = []
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (size < maxBodyBytes) chunks.push(chunk.subarray(0, maxBodyBytes - size))
      size += chunk.length
    }
    const entry: ReceivedRequest = {
      headers: copyHeaders(req),
      rawBody: Buffer.concat(chunks),
      path: req.url ?? '/',
      method: req.method ?? 'GET',
      at: Date.now(),
    }
    received.push(entry)
    const answer: ReceiverResponse =
      size > maxBodyBytes ? { status: 413 } : await respond({ ...entry, headers: { ...entry.headers } })
    if (answer.delayMs && answer.delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer)
          resolve()
        }, answer.delayMs)
        timers.add(timer)
      })
    }
    if (res.destroyed) return
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body ?? '')
  }

  const server: Server = createServer({ cert, key }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end()
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('tlsClientError', () => {
    // Clients that refuse our certificate are expected in tests; nothing to do.
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const origin = `https://127.0.0.1:${port}`

  let closing: Promise<void> | undefined
  return {
    url: `${origin}/hook`,
    origin,
    port,
    ca: cert,
    received,
    waitFor: (predicate = () => true, timeoutMs = 5000) =>
      waitFor(() => received.find(predicate), { timeoutMs, message: 'no matching request received' }),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
      return closing
    },
  }
}

// Key generation and signing cost 100-300 ms, so receivers share one certificate per process.
let sharedCertPromise: Promise<SelfSignedCert> | undefined
function sharedCert(): Promise<SelfSignedCert> {
  sharedCertPromise ??= generateLocalhostCert().catch((err: unknown) => {
    sharedCertPromise = undefined
    throw err
  })
  return sharedCertPromise
}

function copyHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = value
  }
  return headers
}
