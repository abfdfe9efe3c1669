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
  const lingerMs = opts.lingerMs ?? DEFAULT_LINGER_MS
  const maxDrainBytes = opts.maxDrainBytes ?? 16 * MB

  // Node calls this once the `Connection: close` response has been written (see _http_server resOnFinish).
  socket.destroySoon = function lingeringClose(this: net.Socket) {
    if (req.complete) {
      net.Socket.prototype.destroySoon.call(this)
      return
    }
    lingerThenDestroy(this, lingerMs)
    let drained = 0
    req.on('error', () => {})
    req.on('end', () => this.destroy())
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length
      if (drained > maxDrainBytes) this.destroy()
    })
    req.resume()
  }
}
