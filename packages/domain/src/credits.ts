/** The most credits a balance, a cap, a grant or one job's reservation can be (the ledger's 32-bit columns). */
export const MAX_CREDITS = 2_147_483_647

/** Credits reserved at submission: pages counted at intake × the pipeline's per-page price. */
export function creditsForPages(pages: number, perPage: number): number {
  return Math.max(0, Math.trunc(pages)) * Math.max(0, Math.trunc(perPage))
}
