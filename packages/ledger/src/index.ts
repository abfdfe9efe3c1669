export {
  reserveCredits,
  explainReservationRefusal,
  settleCredits,
  voidCredits,
  grantCredits,
  getBalance,
  ENTRY_ACCOUNTS,
} from './ledger.ts'
export type { ReserveResult, Balance, LedgerEntryKind, LedgerAccount } from './ledger.ts'
export { CreditReserver } from './credit-reserver.ts'
export { listLedgerEntries } from './ledger-entries.ts'
export type { LedgerEntryView } from './ledger-entries.ts'
export { expireOrphanedHolds } from './hold-expiry.ts'
export type { ExpireHoldsOptions } from './hold-expiry.ts'
export { reconcileLedger } from './reconcile.ts'
export type { ReconcileReport, BalanceDrift, HoldAnomaly } from './reconcile.ts'
export { ledgerMetrics } from './ledger-metrics.ts'
export type { LedgerMetricsOptions } from './ledger-metrics.ts'
