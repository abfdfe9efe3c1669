import type { Db } from '@quire/db'
import { Gauge, Registry } from 'prom-client'
import { reconcileLedger, type ReconcileReport } from './reconcile.ts'

/** Options for {@link ledgerMetrics}. */
export type LedgerMetricsOptions = {
  /** Registry to add the gauges to (default: a new one, returned). */
  registry?: Registry
  /** Scrapes within this many ms reuse the last reconciliation (default 5000): it reads every entry. */
  cacheMs?: number
}

/**
 * Prometheus gauges recomputed from the ledger on scrape: `quire_ledger_drift_credits` (sum of |stored - computed|
 * over every balance check, 0 when consistent), `quire_ledger_hold_anomalies` (holds whose entries disagree with
 * their state) and `quire_ledger_max_settles_per_job` (1 at most). Mount `metrics()` at /metrics with `contentType`.
 */
export function ledgerMetrics(db: Db, opts: LedgerMetricsOptions = {}) {
  const registry = opts.registry ?? new Registry()
  const cacheMs = opts.cacheMs ?? 5000
  let last: { at: number; report: Promise<ReconcileReport> } | null = null
  const report = () => {
    if (!last || Date.now() - last.at > cacheMs) {
      const pending = reconcileLedger(db)
      last = { at: Date.now(), report: pending }
      // A failed reconciliation is not cached: the next scrape tries again.
      pending.catch(() => {
        if (last?.report === pending) last = null
      })
    }
    return last.report
  }
  new Gauge({
    name: 'quire_ledger_drift_credits',
    help: 'Credits by which stored balances differ from the sums of the ledger entries and holds (0 = consistent)',
    registers: [registry],
    async collect() {
      this.set((await report()).driftCredits)
    },
  })
  new Gauge({
    name: 'quire_ledger_hold_anomalies',
    help: 'Credit holds whose ledger entries do not match their state, plus job entries without a hold',
    registers: [registry],
    async collect() {
      this.set((await report()).holdAnomalies.length)
    },
  })
  new Gauge({
    name: 'quire_ledger_max_settles_per_job',
    help: 'Most settle entries recorded for any one job (never more than 1)',
    registers: [registry],
    async collect() {
      this.set((await report()).maxSettlesPerJob)
    },
  })
  return {
    registry,
    contentType: registry.contentType,
    /** The registry's metrics in the Prometheus text format. */
    metrics: () => registry.metrics(),
  }
}
