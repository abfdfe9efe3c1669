// @ts-check
// What `npm start` (start.mjs) does when one of its apps exits on its own, apart so that it can be tested without
// starting the stack.

/** sysexits' EX_CONFIG: an app refused its configuration (`configOrExit` in packages/config). */
export const EX_CONFIG = 78

/**
 * A configuration error stops everything: a restart would fail the same way, forever. Any other exit restarts that app
 * with backoff (1 s, doubling to 30 s; back to 1 s after a minute up), as a container restart policy would.
 * @param {{ code: number | null, upMs: number, restarts: number }} exit `restarts`: of this app since it last ran a
 *   minute
 * @returns {{ action: 'stop', exitCode: number } | { action: 'restart', delayMs: number, attempt: number }}
 */
export function afterAppExit({ code, upMs, restarts }) {
  if (code === EX_CONFIG) return { action: 'stop', exitCode: EX_CONFIG }
  const attempt = upMs > 60_000 ? 0 : restarts
  return { action: 'restart', delayMs: Math.min(30_000, 1000 * 2 ** attempt), attempt }
}

/**
 * The port `npm start` checks and waits on, read as the API reads QUIRE_API_PORT (blank: the default, 3000). Null when
 * it is not a port number: the apps then report it with the rest of the configuration and `npm start` stops.
 * @param {string | undefined} value
 * @returns {number | null}
 */
export function apiPortFromEnv(value) {
  if (value === undefined || value.trim() === '') return 3000
  return /^\d+$/.test(value) && Number(value) <= 65535 ? Number(value) : null
}
