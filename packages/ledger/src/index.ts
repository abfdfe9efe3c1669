export { reserveCredits, settleCredits, voidCredits, grantCredits, getBalance } from './ledger.ts'
export type { ReserveResult, Balance, LedgerEntryKind } from './ledger.ts'
