import { QuireTimeoutError } from './errors.ts'

export type WaitOptions = {
  /** Give up (QuireTimeoutError) after this many milliseconds. Default 10 minutes. */
  timeoutMs?: number
  /** First wait between reads; it grows ×1.5 per read up to `maxIntervalMs`. Default 500 ms. */
  intervalMs?: number
  /** Longest wait between reads. Default 10 s. */
  maxIntervalMs?: number
  /** Stops waiting (rejects with the signal's reason). */
  signal?: AbortSignal
}

/** Reads a job until `isFinal` holds, backing off between reads, and throws at the deadline. */
export async function pollUntil<J extends { status: string }>(
  jobId: string,
  read: () => Promise<J>,
  isFinal: (status: J['status']) => boolean,
  { timeoutMs = 600_000, intervalMs = 500, maxIntervalMs = 10_000, signal }: WaitOptions = {},
): Promise<J> {
  const deadline = Date.now() + timeoutMs
  let wait = intervalMs
  for (;;) {
    signal?.throwIfAborted()
    const job = await read()
    if (isFinal(job.status)) return job
    const left = deadline - Date.now()
    if (left <= 0) throw new QuireTimeoutError(jobId, job.status)
    await sleep(Math.min(wait, left), signal)
    wait = Math.min(wait * 1.5, maxIntervalMs)
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, ms)
    function done() {
      signal?.removeEventListener('abort', abort)
      resolve()
    }
    function abort() {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', abort, { once: true })
  })
