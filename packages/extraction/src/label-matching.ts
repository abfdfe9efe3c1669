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

/** Letters and digits (Latin, Greek, Cyrillic). Plain ranges, not \p{L}: non-unicode regexes compile ~25× faster. */
export const WORD_CHARS = 'A-Za-z0-9\\u00C0-\\u024F\\u0370-\\u03FF\\u0400-\\u04FF'
const NOT_WORD_BEFORE = `(?<![${WORD_CHARS}])`
const NOT_WORD_AFTER = `(?![${WORD_CHARS}])`

/** "No", "Nr.", "Number", "#", "N°" (and OCR's "N0") are interchangeable in labels ("Invoice No" = "Invoice #"). */
const NUMBER_WORDS = new Set(['no', 'nr', 'num', 'number', 'numbers', '#', 'n°', 'nº', 'no.', 'nr.', 'nos'])
const NUMBER_TOKEN = `(?:(?:numbers?|num|nos?|nr|n0)\\.?${NOT_WORD_AFTER}|n[°º]|#)`
const WORD = new RegExp(`[${WORD_CHARS}]`)

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Accented letters also match their bare form: OCR and plain-ASCII writers drop accents ("Net a payer"). */
const FOLDED: Readonly<Record<string, string>> = Object.fromEntries(
  ['àáâäa', 'éèêëe', 'íìîïi', 'óòôöo', 'úùûüu', 'ñn', 'çc', 'ßß'].flatMap((group) => {
    const bare = group.slice(-1)
    return [...group.slice(0, -1)].flatMap((ch) => [
      [ch, `[${ch}${bare}]`],
      [ch.toUpperCase(), `[${ch.toUpperCase()}${bare.toUpperCase()}]`],
    ])
  }),
)

function tokenSource(token: string): string {
  const lower = token.toLowerCase()
  if (NUMBER_WORDS.has(lower) || NUMBER_WORDS.has(lower.replace(/[.:]+$/, ''))) return NUMBER_TOKEN
  let out = ''
  for (const ch of token) {
    if (ch === '.') out += '\\.?'
    else if (ch === '-') out += '[-\\s]?'
    else if (ch === "'" || ch === '’') out += "['’]?"
    else if (ch === '/') out += '\\s*/\\s*'
    else out += FOLDED[ch] ?? escape(ch)
  }
  return out
}

// Words of a label never straddle a column gap (3+ spaces): "Data   Scadenza" is two labels.
const SPACE_JOIN = '(?:[ \\t]?[-_][ \\t]?|[ \\t]{1,2}|[ \\t]*\\n[ \\t]*)'
const GLUE_JOIN = '[ \\t]*(?:\\n[ \\t]*)?'
// A number word sits next to its noun ("Invoice No", "Nº factura"), never across a column gap: "FACTURA   Nº factura"
// is a title and then the label, not "Factura No".
const NUMBER_JOIN = '(?:[ \\t]{0,2}|[ \\t]*\\n[ \\t]*)'

/** Words of a label as regex source, joined by flexible whitespace. */
function wordsSource(words: string[]): string {
  let source = ''
  words.forEach((token, i) => {
    if (i > 0) {
      const prev = words[i - 1] as string
      const numbered = tokenSource(token) === NUMBER_TOKEN || tokenSource(prev) === NUMBER_TOKEN
      const glued = !WORD.test(prev.slice(-1)) || !WORD.test(token[0] as string)
      source += numbered ? NUMBER_JOIN : glued ? GLUE_JOIN : SPACE_JOIN
    }
    source += tokenSource(token)
  })
  return source
}

function splitWords(text: string): string[] {
  return text
    .trim()
    .split(/\s+/)
    .flatMap((t) => t.split(/(?<=[A-Za-z0-9\u00C0-\u024F])(?=#)/))
    .filter(Boolean)
}

const regexCache = new Map<string, RegExp>()

/**
 * A label as a regex: case-insensitive, whole words, any whitespace (or one line break, or a
 * hyphen) between its words, optional dots ("excl." = "excl"), and number words interchangeable.
 * Internally a label may hold alternatives in braces: "{Total|Amount} {excl.|before} {VAT|Tax}".
 */
export function labelRegex(label: string): RegExp {
  const cached = regexCache.get(label)
  if (cached) return cached
  const parts = label
    .trim()
    .replace(/:+$/, '')
    .split(/(\{[^}]*\})/)
    .filter((p) => p.trim())
  const pieces: Array<{ source: string; first: string; last: string }> = []
  for (const part of parts) {
    if (part.startsWith('{')) {
      const alternatives = part
        .slice(1, -1)
        .split('|')
        .map((a) => splitWords(a))
      pieces.push({
        source: `(?:${alternatives.map(wordsSource).join('|')})`,
        first: alternatives.every((a) => WORD.test(a[0]?.[0] ?? '')) ? 'a' : '#',
        last: alternatives.every(
          (a) => WORD.test(a[a.length - 1]?.slice(-1) ?? '') && tokenSource(a[a.length - 1] ?? '') !== NUMBER_TOKEN,
        )
          ? 'a'
          : '#',
      })
    } else {
      const words = splitWords(part)
      if (words.length === 0) continue
      const lastWord = words[words.length - 1] as string
      pieces.push({
        source: wordsSource(words),
        first: WORD.test(words[0]?.[0] ?? '') ? 'a' : '#',
        last: WORD.test(lastWord.slice(-1)) && tokenSource(lastWord) !== NUMBER_TOKEN ? 'a' : '#',
      })
    }
  }
  let source = ''
  pieces.forEach((piece, i) => {
    if (i > 0) source += pieces[i - 1]!.last === 'a' && piece.first === 'a' ? SPACE_JOIN : GLUE_JOIN
    source += piece.source
  })
  const lead = pieces[0]?.first === 'a' ? NOT_WORD_BEFORE : ''
  const trail = pieces[pieces.length - 1]?.last === 'a' ? NOT_WORD_AFTER : ''
  const re = new RegExp(lead + source + trail, 'gi')
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
