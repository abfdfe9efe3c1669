/** One way a field can be labelled in a document. */
export type LabelSpec = {
  text: string
  /** How strongly this label identifies the field, 0..1. */
  weight: number
  /** Only match at the start of a line or cell. */
  lineStart?: boolean
  /** Reject the match when the text right after it matches (e.g. "Total" followed by "excl."). */
  notFollowedBy?: RegExp
  /** Reject the match when the text right before it (same line) matches (e.g. "Sub-" before "Total"). */
  notPrecededBy?: RegExp
}

export type LabelGroup = { key: string; labels: LabelSpec[] }

export type LabelHit = { key: string; label: LabelSpec; start: number; end: number; multiline: boolean }

/** "No", "Nr.", "Number", "#", "N°" are interchangeable in labels ("Invoice No" = "Invoice #"). */
const NUMBER_WORDS = new Set(['no', 'nr', 'num', 'number', 'numbers', '#', 'n°', 'nº', 'no.', 'nr.', 'nos'])
const NUMBER_TOKEN = String.raw`(?:(?:numbers?|num|nos?|nr)\.?(?![\p{L}\p{N}])|n[°º]|#)`
const WORD = /[\p{L}\p{N}]/u

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function tokenSource(token: string): string {
  const lower = token.toLowerCase()
  if (NUMBER_WORDS.has(lower) || NUMBER_WORDS.has(lower.replace(/[.:]+$/, ''))) return NUMBER_TOKEN
  let out = ''
  for (const ch of token) {
    if (ch === '.') out += String.raw`\.?`
    else if (ch === '-') out += String.raw`[-\s]?`
    else if (ch === "'" || ch === '’') out += "['’]?"
    else if (ch === '/') out += String.raw`\s*/\s*`
    else out += escape(ch)
  }
  return out
}

const regexCache = new Map<string, RegExp>()

/**
 * A label as a regex: case-insensitive, whole words, any whitespace (or one line break, or a
 * hyphen) between its words, optional dots ("excl." = "excl"), and number words interchangeable.
 */
export function labelRegex(label: string): RegExp {
  const cached = regexCache.get(label)
  if (cached) return cached
  const tokens = label
    .trim()
    .replace(/:+$/, '')
    .split(/\s+/)
    .flatMap((t) => t.split(/(?<=[\p{L}\p{N}])(?=#)/u))
    .filter(Boolean)
  let source = ''
  tokens.forEach((token, i) => {
    if (i > 0) {
      const prev = tokens[i - 1] as string
      const glued = !WORD.test(prev.slice(-1)) || !WORD.test(token[0] as string) || tokenSource(token) === NUMBER_TOKEN
      source += glued ? String.raw`[ \t]*(?:\n[ \t]*)?` : String.raw`(?:[ \t]*[-_][ \t]*|[ \t]+|[ \t]*\n[ \t]*)`
    }
    source += tokenSource(token)
  })
  const first = tokens[0] ?? ''
  const last = tokens[tokens.length - 1] ?? ''
  const lead = WORD.test(first[0] ?? '') ? String.raw`(?<![\p{L}\p{N}])` : ''
  const trail = WORD.test(last.slice(-1)) && tokenSource(last) !== NUMBER_TOKEN ? String.raw`(?![\p{L}\p{N}])` : ''
  const re = new RegExp(lead + source + trail, 'giu')
  regexCache.set(label, re)
  return re
}

/**
 * Finds every label of every group in text. Where two matches overlap, the longer one wins
 * (a single-line match beats one spread over two lines): "Subtotal" hides "Total", "Due Date"
 * hides "Date", "VAT No" hides "VAT". Groups whose key starts with '#' are stop labels: they
 * only hide shorter labels and yield no values.
 */
export function findLabelHits(text: string, groups: readonly LabelGroup[]): LabelHit[] {
  const hits: LabelHit[] = []
  for (const group of groups) {
    for (const label of group.labels) {
      const re = labelRegex(label.text)
      re.lastIndex = 0
      for (const m of text.matchAll(re)) {
        const start = m.index
        const end = start + m[0].length
        const lineStart = text.lastIndexOf('\n', start - 1) + 1
        const before = text.slice(lineStart, start)
        const multiline = m[0].includes('\n')
        if (multiline && before.trim() !== '') continue
        if (label.lineStart && !/^\s*$|\s{2,}$|\|\s*$/.test(before)) continue
        if (label.notPrecededBy?.test(before)) continue
        if (label.notFollowedBy?.test(text.slice(end, end + 40))) continue
        hits.push({ key: group.key, label, start, end, multiline })
      }
    }
  }
  const rank = (h: LabelHit): number => (h.multiline ? 0 : 1_000_000) + (h.end - h.start)
  const ordered = [...hits].sort((a, b) => rank(b) - rank(a))
  const kept: LabelHit[] = []
  for (const hit of ordered) {
    const overlapsStronger = kept.some((k) => hit.start < k.end && hit.end > k.start && rank(k) > rank(hit))
    if (!overlapsStronger) kept.push(hit)
  }
  return kept.sort((a, b) => a.start - b.start || b.end - a.end)
}
