/**
 * Group commit for concurrent jobs: calls made while a batch is in flight wait for it to finish and then go together
 * in the next one, so one statement serves many jobs under load and a lone call still runs at once (the first call
 * waits only for the current I/O callbacks to finish, so calls made by the same burst of events share its batch).
 * With `windowMs`, a batch starts no sooner than `windowMs` after the one before it started: under a steady stream
 * of calls (deliveries finishing one by one) the batches grow to what arrives in that window instead of what arrives
 * during one statement, at the cost of up to `windowMs` of waiting per call.
 * `run` gets the items in call order and returns one result per item, in the same order; if it throws, every call of
 * that batch rejects with its error.
 */
export function coalesce<I, O>(
  run: (items: readonly I[]) => Promise<readonly O[]>,
  opts: { maxBatch: number; windowMs?: number },
): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }
  const windowMs = opts.windowMs ?? 0
  let queue: Waiting[] = []
  let busy = false
  let lastStart = Number.NEGATIVE_INFINITY

  const flush = async () => {
    while (queue.length > 0) {
      const wait = lastStart + windowMs - performance.now()
      if (wait > 0 && queue.length < opts.maxBatch) await new Promise((r) => setTimeout(r, wait))
      lastStart = performance.now()
      const batch = queue.slice(0, opts.maxBatch)
      queue = queue.slice(batch.length)
      try {
        const out = await run(batch.map((w) => w.item))
        if (out.length !== batch.length) throw new Error(`batch of ${batch.length} answered ${out.length} results`)
        batch.forEach((w, i) => w.resolve(out[i] as O))
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    busy = false
  }
  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      if (busy) return
      busy = true
      setImmediate(() => void flush())
    })
}
