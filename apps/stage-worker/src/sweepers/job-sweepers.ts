import { expireJobs, requeueStalledWork, retryDueErrorGroups, sweepUnownedBlobs, timeOutSyncJobs } from '@quire/core'
import type { Db } from '@quire/db'
import type { BlobStore } from '@quire/storage'
import type { Logger } from 'pino'

/** How often due error-group retries are looked for, at most. */
const ERROR_GROUP_POLL_MS = 1000

/**
 * Periodic sweeps over jobs: retention, the hard limit of synchronous jobs, work Redis lost, and stored files no live
 * job owns.
 */
export function startJobSweepers(opts: {
  db: Db
  blobs: BlobStore
  log: Logger
  intervalMs: number
  retentionMs: number
  syncJobTimeoutMs: number
  requeueAfterMs: number
  /** 0: never (a store another deployment writes to as well would lose that deployment's files). */
  blobSweepIntervalMs: number
  blobSweepMinAgeMs: number
  errorGroupRetryScheduleMs: readonly number[]
  onCommit: () => void
}) {
  let running = false
  const sweep = async () => {
    if (running) return
    running = true
    try {
      const timedOut = await timeOutSyncJobs({
        db: opts.db,
        hardLimitMs: opts.syncJobTimeoutMs,
        onCommit: opts.onCommit,
      })
      let expired = 0
      for (let n = -1; n !== 0; )
        expired += n = await expireJobs({ db: opts.db, blobs: opts.blobs, retentionMs: opts.retentionMs })
      const requeued = await requeueStalledWork({ db: opts.db, staleMs: opts.requeueAfterMs })
      if (expired || requeued.jobs || requeued.events || requeued.deliveries) opts.onCommit()
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
  // Error-group retries are due at set times: looked for more often than the other sweeps (an indexed query).
  let retrying = false
  const retryGroups = async () => {
    if (retrying) return
    retrying = true
    try {
      const retried = await retryDueErrorGroups({
        db: opts.db,
        retryScheduleMs: opts.errorGroupRetryScheduleMs,
        onCommit: opts.onCommit,
      })
      if (retried) opts.log.info({ retried }, 'error groups retried')
    } catch (err) {
      opts.log.warn({ err }, 'error group retry pass failed; will retry')
    } finally {
      retrying = false
    }
  }
  const groupTimer = setInterval(() => void retryGroups(), Math.min(opts.intervalMs, ERROR_GROUP_POLL_MS))
  // Listing the whole store is the costly part (every object of a bucket): rare, and each worker starts at a random
  // offset so several workers started together do not list at once.
  let sweepingBlobs = false
  const sweepBlobs = async () => {
    if (sweepingBlobs) return
    sweepingBlobs = true
    try {
      const swept = await sweepUnownedBlobs({ db: opts.db, blobs: opts.blobs, minAgeMs: opts.blobSweepMinAgeMs })
      if (swept.deleted) opts.log.info(swept, 'stored files without a live job deleted')
    } catch (err) {
      opts.log.warn({ err }, 'blob store sweep failed; will retry')
    } finally {
      sweepingBlobs = false
    }
  }
  let blobTimer: NodeJS.Timeout | undefined
  const firstBlobSweep =
    opts.blobSweepIntervalMs > 0
      ? setTimeout(() => {
          void sweepBlobs()
          blobTimer = setInterval(() => void sweepBlobs(), opts.blobSweepIntervalMs)
        }, Math.random() * opts.blobSweepIntervalMs)
      : undefined
  return {
    stop: () => {
      clearInterval(timer)
      clearInterval(groupTimer)
      clearTimeout(firstBlobSweep)
      clearInterval(blobTimer)
    },
  }
}
