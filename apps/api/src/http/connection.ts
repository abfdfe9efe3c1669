import net from 'node:net'
import type { Context } from 'koa'

const LINGERING = Symbol('quire.lingering')
const MB = 1024 * 1024

export type LingerOptions = {
  /** How long to keep reading (and discarding) after the response, waiting for the client to close. */
  lingerMs?: number
  /** Stop waiting once this much more of the request body has been discarded. */
  maxDrainBytes?: number
}

/**
 * For a response decided while the request body is still arriving (an early 413, a rejected or malformed upload, a
 * failed authentication in front of a large body): answer with `Connection: close` and close the connection after
 * the response without losing it.
 *
 * Node ends a `Connection: close` response with `socket.destroySoon()`: FIN, then destroy as soon as the response is
 * flushed. With request bytes still unread in the kernel, that close turns into a TCP RST, and a client that has not
 * read the response yet (it is busy sending) may lose it. So, for this one socket, close the way HTTP servers linger:
 * half-close after the response, keep reading and discarding what the client still sends for a short while (bounded
 * in time and bytes), and destroy when the client closes its side or the bound is reached. A client that reads early
 * responses (undici/fetch, curl, browsers) stops sending as soon as it has the answer.
 *
 * Idempotent; a no-op when the request body has already been read completely.
 */
/** Linger time after an early answer, before the connection is cut whatever the client still sends. */
export const DEFAULT_LINGER_MS = 2_000

/**
 * A request that declared a body of at most this size (one file at the platform's 100 MB limit, with room to spare)
 * is read to its end after an early answer, for up to WHOLE_BODY_LINGER_MS. Node's fetch (undici) sending a body it
 * holds whole (a Buffer, Blob or FormData) does not stop at the answer: it keeps writing, and a connection cut under
 * it fails the request with EPIPE instead of handing over the 401 or 413 that had arrived (an outside check saw it at
 * 50 and 101 MB; at 20 MB the 16 MB bound happened to suffice). Larger or undeclared bodies keep the 16 MB / 2 s
 * bound: a client streaming without end is still cut off.
 */
export const WHOLE_BODY_DRAIN_MAX_BYTES = 128 * MB
export const WHOLE_BODY_LINGER_MS = 30_000

/**
 * Half-closes the socket (once what was written is flushed) and destroys it after `lingerMs` at the latest; the
 * caller decides what it reads meanwhile and when the client's own close ends it sooner.
 */
export function lingerThenDestroy(socket: net.Socket, lingerMs: number): void {
  if (socket.writable) socket.end()
  const timer = setTimeout(() => socket.destroy(), lingerMs)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
}

export function closeAfterResponse(ctx: Context, opts: LingerOptions = {}): void {
  const req = ctx.req
  if (req.complete || ctx.headerSent) return
  const socket = req.socket as net.Socket & { [LINGERING]?: true }
  if (!socket || socket.destroyed) return
  ctx.set('Connection', 'close')
  if (socket[LINGERING]) return
  socket[LINGERING] = true
  const declared = Number(req.headers['content-length'])
  const drainWhole = Number.isSafeInteger(declared) && declared <= WHOLE_BODY_DRAIN_MAX_BYTES
  const lingerMs = opts.lingerMs ?? (drainWhole ? WHOLE_BODY_LINGER_MS : DEFAULT_LINGER_MS)
  const maxDrainBytes = opts.maxDrainBytes ?? (drainWhole ? declared : 16 * MB)

  let drained = 0
  let answered = false
  const discard = (chunk: Buffer) => {
    drained += chunk.length
    if (answered && drained > maxDrainBytes) socket.destroy()
  }
  req.on('error', () => {})
  // A body nobody has started reading (an answer decided before it, as a failed key check): discard it from now on.
  // Node dumps a request still unread when its response finishes, and a dumped request emits neither `data` nor
  // `end`: the linger below could then not tell when the body has all arrived. (A body the multipart parser read
  // and paused is not dumped; it gets the same listener below.)
  if (req.readableFlowing === null) req.on('data', discard)

  // Node calls this once the `Connection: close` response has been written (see _http_server resOnFinish).
  socket.destroySoon = function lingeringClose(this: net.Socket) {
    if (req.complete) {
      net.Socket.prototype.destroySoon.call(this)
      return
    }
    answered = true
    lingerThenDestroy(this, lingerMs)
    req.on('end', () => this.destroy())
    if (!req.listeners('data').includes(discard)) req.on('data', discard)
    req.resume()
  }
}
