import { expireJobs, requeueStalledWork, timeOutSyncJobs } from '@quire/core'
import type { Db } from '@quire/db'
import type { BlobStore } from '@quire/storage'
import type { Logger } from 'pino'

/** Periodic sweeps over jobs: retention, the hard limit of synchronous jobs, and work Redis lost. */
export function startJobSweepers(opts: {
  db: Db
  blobs: BlobStore
  log: Logger
  intervalMs: number
  retentionMs: number
  syncJobTimeoutMs: number
  requeueAfterMs: number
  onCommit: () => void
}) {
  let running = false
  const sweep = async () => {
    if (running) return
    running = true
    try {
      const timedOut = await timeOutSyncJobs({ db: opts.db, hardLimitMs: opts.syncJobTimeoutMs, onCommit: opts.onCommit })
      let expired = 0
      for (let n = -1; n !== 0; ) expired += n = await expireJobs({ db: opts.db, blobs: opts.blobs, retentionMs: opts.retentionMs })
      const requeued = await requeueStalledWork({ db: opts.db, staleMs: opts.requeueAfterMs })
      if (requeued.jobs || requeued.events || requeued.deliveries) opts.onCommit()
      if (timedOut || expired || requeued.jobs || requeued.events || requeued.deliveries) {
        opts.log.info({ timedOut, expired, requeued }, 'job sweep')
      }
    } catch (err) {
      opts.log.warn({ err }, 'job sweep failed; will retry')
    } finally {
      running = false
    }
  }
  const timer = setInterval(() => void sweep(), opts.intervalMs)
  void sweep()
  return { stop: () => clearInterval(timer) }
}
