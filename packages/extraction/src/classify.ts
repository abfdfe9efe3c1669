import type { DocumentType } from './schema.ts'

export type Classification = { type: string | null; schemaId: string | null; confidence: number }

const UNCLASSIFIED: Classification = Object.freeze({ type: null, schemaId: null, confidence: 0 }) as Classification
/** Text near the top (title, heading) counts extra: "INVOICE" as a heading says more than in a footer. */
const HEAD_CHARS = 300

const keywordCache = new Map<string, RegExp>()
function keywordRegex(keyword: string): RegExp {
  let re = keywordCache.get(keyword)
  if (!re) {
    const body = keyword
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join(String.raw`[\s\-_]+`)
    re = new RegExp(String.raw`(?<![\p{L}\p{N}])${body}(?![\p{L}\p{N}])`, 'giu')
    keywordCache.set(keyword, re)
  }
  return re
}

type Score = { type: DocumentType; evidence: number; index: number }

function score(text: string, type: DocumentType, index: number): Score {
  let distinct = 0
  let extra = 0
  let head = false
  for (const keyword of type.keywords ?? []) {
    if (!keyword.trim()) continue
    const re = keywordRegex(keyword)
    re.lastIndex = 0
    const matches = [...text.matchAll(re)]
    if (matches.length === 0) continue
    distinct++
    extra += Math.min(2, matches.length - 1)
    if ((matches[0]?.index ?? Infinity) < HEAD_CHARS) head = true
  }
  const evidence = distinct === 0 ? 0 : distinct + 0.3 * extra + (head ? 0.5 : 0)
  return { type, evidence, index }
}

/**
 * Keyword classification: each type scores by how many of its keywords occur (case-insensitive,
 * whole words; multi-word keywords tolerate any spacing or hyphen), with a little extra for
 * repeats and for a keyword near the top. The best type wins (ties: the one declared first).
 * Confidence rises with the evidence (one keyword once ≈ 0.6) and falls when the runner-up is close.
 * No keyword anywhere → `{ type: null, schemaId: null, confidence: 0 }`.
 */
export function classify(text: string, documentTypes: readonly DocumentType[]): Classification {
  if (!text || documentTypes.length === 0) return { ...UNCLASSIFIED }
  const scores = documentTypes
    .map((t, i) => score(text, t, i))
    .sort((a, b) => b.evidence - a.evidence || a.index - b.index)
  const best = scores[0]
  if (!best || best.evidence === 0) return { ...UNCLASSIFIED }
  const runnerUp = scores[1]?.evidence ?? 0
  const strength = 1 - 0.4 ** best.evidence
  const margin = (best.evidence - runnerUp) / best.evidence
  const confidence = Math.round(strength * (0.5 + 0.5 * margin) * 100) / 100
  return { type: best.type.name, schemaId: best.type.schema_id ?? null, confidence }
}
