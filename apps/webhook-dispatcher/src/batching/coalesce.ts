/**
 * Group commit for concurrent jobs: calls made while a batch is in flight wait for it to finish and then go together
 * in the next one, so one statement serves many jobs under load and a lone call still runs at once (the first call
 * waits only for the current I/O callbacks to finish, so calls made by the same burst of events share its batch).
 * `run` gets the items in call order and returns one result per item, in the same order; if it throws, every call of
 * that batch rejects with its error.
 */
export function coalesce<I, O>(
  run: (items: readonly I[]) => Promise<readonly O[]>,
  opts: { maxBatch: number },
): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }
  let queue: Waiting[] = []
  let busy = false

  const flush = async () => {
    while (queue.length > 0) {
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
