/**
 * At most `max` calls of the returned function run at once; the others wait their turn, first come first served.
 * The dispatcher's deliveries in flight: a job holds a slot only while its POST is under way, not while it reads or
 * records its delivery.
 */
export function limitConcurrency(max: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }
  return async (fn) => {
    if (running < max) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await fn()
    } finally {
      release()
    }
  }
}
