import http, { STATUS_CODES } from 'node:http'
import type net from 'node:net'
import { DomainError } from '@quire/domain'
import type { Logger } from 'pino'
import { DEFAULT_LINGER_MS, lingerThenDestroy } from './connection.ts'
import { errorResponse } from './errors.ts'

const ANSWERED = Symbol('quire.client-error-answered')

/**
 * Requests Node's HTTP parser rejects before any route sees them (headers over 16 KB, malformed request lines or
 * framing, headers that never finish arriving) are answered in the flat envelope, as DESIGN's robustness rule asks,
 * instead of Node's bare status line.
 *
 * Node's own answer destroys the socket at once. With request bytes still arriving, that close becomes a TCP reset,
 * and a client still busy writing its request may lose the answer (the fuzz run saw a client's write reset before
 * it had read the 431). So close the way the rest of the API does after an early answer (connection.ts): write the
 * answer, half-close, and keep reading (the parser discards it) until the client closes or `lingerMs` passes.
 */
export function answerClientErrors(server: http.Server, log: Logger, lingerMs = DEFAULT_LINGER_MS): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket & { [ANSWERED]?: true }) => {
    // The parser reports each further chunk of the rejected request again; the first report was answered.
    if (socket[ANSWERED]) return
    socket[ANSWERED] = true
    // A response whose headers have gone out (the body of a request turned malformed after Koa answered) cannot be
    // followed by another one; a client that reset the connection has nobody to answer. A response not yet started
    // (the request's body turned malformed while a route read it) is replaced by this answer, as Node does.
    const current = (socket as net.Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
      socket.destroy()
      return
    }
    const { status, body } = errorResponse(clientErrorOf(err))
    log.debug({ code: err.code, status }, 'request rejected by the HTTP parser')
    const json = JSON.stringify(body)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        'Connection: close\r\n\r\n' +
        json,
    )
    lingerThenDestroy(socket, lingerMs)
    // Our side is ended: when the client ends its side too, the connection is done.
    socket.once('end', () => socket.destroy())
  })
}

function clientErrorOf(err: NodeJS.ErrnoException): DomainError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new DomainError('HEADERS_TOO_LARGE', `the request line and headers exceed ${http.maxHeaderSize} bytes`)
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return new DomainError('REQUEST_TIMEOUT', 'the request headers did not arrive in time')
    default:
      return new DomainError('MALFORMED_REQUEST', 'the request is not valid HTTP/1.1')
  }
}
