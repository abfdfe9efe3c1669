/** Credits reserved at submission: pages counted at intake × the pipeline's per-page price. */
export function creditsForPages(pages: number, perPage: number): number {
  return Math.max(0, Math.trunc(pages)) * Math.max(0, Math.trunc(perPage))
}
