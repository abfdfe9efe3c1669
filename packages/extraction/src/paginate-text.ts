/**
 * Splits text into exactly `pageCount` pages of similar length, cutting at a line break near each
 * boundary when there is one (else at a space, else anywhere). Pages may be empty only when the
 * text is shorter than the page count.
 */
export function paginateText(text: string, pageCount: number): string[] {
  const count = Math.max(1, Math.floor(pageCount))
  if (count === 1) return [text]
  const pages: string[] = []
  let start = 0
  for (let i = 1; i < count; i++) {
    const remainingPages = count - i + 1
    const target = start + Math.round((text.length - start) / remainingPages)
    const cut = findCut(text, start, target)
    pages.push(text.slice(start, cut).trim())
    start = cut
  }
  pages.push(text.slice(start).trim())
  return pages
}

function findCut(text: string, start: number, target: number): number {
  if (target <= start) return start
  if (target >= text.length) return text.length
  const window = Math.max(50, Math.round((target - start) * 0.25))
  const lo = Math.max(start + 1, target - window)
  const hi = Math.min(text.length - 1, target + window)
  for (const separator of ['\n', ' ']) {
    let best = -1
    for (let i = lo; i <= hi; i++) {
      if (text[i] === separator && (best < 0 || Math.abs(i - target) < Math.abs(best - target))) best = i
    }
    if (best >= 0) return best + 1
  }
  return target
}
