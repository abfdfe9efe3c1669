import type { Db } from '@quire/db'
import { expireOrphanedHolds } from '@quire/ledger'
import type { Logger } from 'pino'

/**
 * Periodically expires credit holds whose job is gone (TigerBeetle's pending-transfer timeout, keyed on the job
 * instead of a clock). Safe to run in every worker process: each expiry is a conditional statement that only a
 * still-pending hold passes. The timer is unref'd, so it never keeps a stopping process alive.
 */
export function startHoldExpirySweeper(opts: { db: Db; log: Logger; intervalMs?: number; minAgeMs?: number }) {
  let running = false
  const sweep = async () => {
    if (running) return
    running = true
    try {
      let total = 0
      for (;;) {
        const expired = (await expireOrphanedHolds(opts.db, { minAgeMs: opts.minAgeMs })).length
        total += expired
        if (expired === 0) break
      }
      if (total) opts.log.info({ expired: total }, 'expired credit holds of jobs that are gone')
    } catch (err) {
      opts.log.warn({ err }, 'hold expiry sweep failed; will retry')
    } finally {
      running = false
    }
  }
  const timer = setInterval(() => void sweep(), opts.intervalMs ?? 60_000)
  timer.unref()
  void sweep()
  return { stop: () => clearInterval(timer) }
}
