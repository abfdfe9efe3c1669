import net from 'node:net'
import { afterAll, beforeAll } from 'vitest'

/**
 * A TCP proxy in front of a real server, to take that server away from the apps as an outage would: `cut()` resets
 * every open connection and refuses new ones, `restore()` accepts again on the same port. The server itself (shared
 * with the rest of the test run) is never touched.
 */
export type TcpProxy = { port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  const track = (s: net.Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => s.destroy())
  }
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host)
    track(client)
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve((server.address() as net.AddressInfo).port)
      })
    })
  const port = await listen(0)
  const stopListening = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))
  const cut = async () => {
    const closing = stopListening()
    for (const s of sockets) s.resetAndDestroy()
    await closing
  }
  return {
    port,
    cut,
    async restore() {
      await listen(port)
    },
    close: cut,
  }
}

/**
 * A proxy in front of the server `url` names, for the test file's duration (its own vitest hooks, registered before
 * the stack's so that it is there when the apps start), and `through`, which points a URL of that server at the proxy:
 * the stack's URL rewrite.
 */
export function useTcpProxy(url: string, defaultPort: number): { proxy: TcpProxy; through: (url: string) => string } {
  const target = new URL(url)
  const ref = {
    proxy: undefined as unknown as TcpProxy,
    through: (appUrl: string) => {
      const u = new URL(appUrl)
      u.hostname = '127.0.0.1'
      u.port = String(ref.proxy.port)
      return u.toString()
    },
  }
  beforeAll(async () => {
    ref.proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || defaultPort) })
  })
  afterAll(async () => {
    await ref.proxy?.close()
  })
  return ref
}
