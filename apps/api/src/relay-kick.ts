/** At most one relay pass per this many milliseconds is kicked by requests; more kicks in between wait for its end. */
export const RELAY_KICK_WINDOW_MS = 20

export type ThrottledKick = {
  /** Asks for a relay pass: at once when none was kicked within the window, else at the window's end. */
  kick(): void
  /** Runs a pending pass at once (shutdown: before the relay stops, so no committed row waits for the next poll). */
  flush(): void
}

/**
 * A relay pass costs a transaction of its own (BEGIN, SELECT ... FOR UPDATE SKIP LOCKED, UPDATE, COMMIT) and a Redis
 * round trip, whether it carries one outbox row or a hundred. Kicked by every submission, a busy API runs one pass
 * per job; throttled, every submission committed within a window rides the same pass. A lone submission still gets
 * its pass at once; under load a job waits at most one window longer before a worker can take it. The rows are
 * committed either way: the outbox is the guarantee, the kick only the latency.
 */
export function throttleKicks(
  kick: () => void,
  windowMs = RELAY_KICK_WINDOW_MS,
  now: () => number = Date.now,
): ThrottledKick {
  let last = Number.NEGATIVE_INFINITY
  let timer: NodeJS.Timeout | null = null
  const fire = () => {
    if (timer) clearTimeout(timer)
    timer = null
    last = now()
    kick()
  }
  return {
    kick() {
      if (timer) return
      const wait = last + windowMs - now()
      if (wait <= 0) {
        fire()
        return
      }
      timer = setTimeout(fire, wait)
      timer.unref()
    },
    flush() {
      if (timer) fire()
    },
  }
}
