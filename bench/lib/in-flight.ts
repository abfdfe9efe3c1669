// For the submit baselines' shutdown: a load generator that stops closes its sockets with requests still being
// handled, so the server's close callback comes before their handlers end; the pools they use must outlive them.
import type Koa from 'koa'

/** Counts the requests `app` is handling; `drained()` resolves once none is. Install before the handler. */
export function trackRequests(app: Koa) {
  let handling = 0
  let onIdle: (() => void) | undefined
  app.use(async (_ctx, next) => {
    handling++
    try {
      await next()
    } finally {
      if (--handling === 0) onIdle?.()
    }
  })
  return {
    drained: (): Promise<void> => (handling === 0 ? Promise.resolve() : new Promise((resolve) => (onIdle = resolve))),
  }
}
