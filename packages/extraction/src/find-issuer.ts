import type { Candidate } from './field-candidates.ts'
import { CUSTOMER_BLOCK_LABELS } from './invoice-labels.ts'
import type { LabelHit } from './label-matching.ts'
import { findAmounts } from './normalise-amount.ts'
import { findDates } from './normalise-date.ts'
import { trimTrailingPunctuation, type Cell, type TextDoc } from './text-lines.ts'

const COMPANY_SUFFIX_ANY_CASE =
  /(?<![\p{L}])(?:ltd|limited|llc|l\.l\.c\.|inc|incorporated|corp|corporation|co\.|company|gmbh|e\.\s?k|e\.\s?v|sarl|sas|s\.a\.|s\.l\.|srl|s\.r\.l\.|spa|s\.p\.a\.|s\.n\.c\.|snc|s\.a\.s\.|s\.a\. de c\.v\.|s\. de r\.l\.|b\.v\.|n\.v\.|pty|plc|llp|a\/s|aps|kft|sp\. z o\.o\.|oü|group|holdings|partners|associates|studio|services|solutions|consulting|technologies)(?![\p{L}])\.?/iu
const COMPANY_SUFFIX_UPPER = /(?<![\p{L}])(?:AG|KG|UG|SA|SL|AB|AS|BV|NV|OY|LP|SE)(?![\p{L}])/u
const hasCompanySuffix = (text: string): boolean =>
  COMPANY_SUFFIX_ANY_CASE.test(text) || COMPANY_SUFFIX_UPPER.test(text)
const TITLE =
  /^(?:tax\s+|vat\s+|commercial\s+|sales\s+|final\s+|original\s+)?(?:invoice|receipt|bill|statement|credit\s+note|debit\s+note|quote|quotation|estimate|pro\s?-?forma(?:\s+invoice)?|rechnung|facture|factura|fattura|order\s+confirmation|purchase\s+order)\b/i
const CONTACT = /@|www\.|https?:|\.(?:com|net|org|io|co\.uk|de|fr)\b|\+\d|\b(?:tel|phone|fax|mobile|email)\b/i
const ADDRESS =
  /^\d+[\s,/-]*\p{L}|\b(?:street|st\.|road|rd\.?|avenue|ave\.?|lane|ln\.?|boulevard|blvd\.?|drive|dr\.|way|court|ct\.|place|pl\.|square|sq\.|suite|floor|unit|building|p\.?\s?o\.?\s?box|strasse|straße|str\.|rue|avenida|via|calle|platz|weg|gasse|allee|laan|straat)\b|\b\d{4,6}\b|\b[A-Z]{1,2}\d{1,2}[A-Z]?\s*\d[A-Z]{2}\b|\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b/iu
const CUSTOMER_START = new RegExp(
  `^(?:${CUSTOMER_BLOCK_LABELS.map((l) => l.replace(/\s+/g, '\\s+')).join('|')})(?:\\s*:|\\s*$)`,
  'i',
)

export function looksLikeAddress(text: string): boolean {
  return ADDRESS.test(text)
}

/** Trims what usually follows a company name on the same line (address, separators). */
export function cleanIssuer(value: string): string {
  const cut = value
    .replace(/^(?:from|issuer|seller|supplier|vendor)\s*[:-]\s*/i, '')
    .split(/\s+[·|•–—]\s+|,\s*(?=\d)|\s+-\s+(?=\d)/)[0]!
  return trimTrailingPunctuation(cut.trim())
}

function isCandidateText(text: string): boolean {
  if (text.length > 80 || text.split(/\s+/).length > 8) return false
  if ((text.match(/\p{L}/gu) ?? []).length < 2) return false
  if (TITLE.test(text) && text.split(/\s+/).length <= 3) return false
  if (text.includes(':') || CONTACT.test(text) || ADDRESS.test(text)) return false
  if (findDates(text).length > 0 || findAmounts(text).some((a) => a.quality === 1)) return false
  if (/^page\s+\d/i.test(text)) return false
  // A sentence ends in a full stop; a company name may too, when its legal form does ("Bianchi & Figli S.n.c.").
  if (/[.!?]$/.test(text) && text.split(/\s+/).length > 4 && !hasCompanySuffix(text)) return false
  return true
}

/**
 * The issuing company from the layout when no label names it: a name-like line near the top
 * (a company suffix such as Ltd/GmbH/Inc raises the score, so does an address right below it),
 * never inside a "Bill To"/"Customer" block, never a title, label, contact or address line.
 */
export function findIssuerByLayout(doc: TextDoc, hits: readonly LabelHit[]): Candidate | null {
  const customer = new Set<Cell>()
  doc.lines.forEach((line, i) => {
    for (const cell of line.cells) {
      if (!CUSTOMER_START.test(cell.text)) continue
      customer.add(cell)
      for (let j = i + 1; j < Math.min(doc.lines.length, i + 7); j++) {
        const next = doc.lines[j]!
        if (next.cells.length === 0) break
        const same =
          next.cells.find((c) => c.column === cell.column) ??
          (next.cells.length === 1 && cell.column === 0 ? next.cells[0] : undefined)
        if (same) customer.add(same)
      }
    }
  })

  const labelled = (cell: Cell): boolean => hits.some((h) => h.start >= cell.start && h.start < cell.end)
  let best: { cell: Cell; score: number } | null = null
  let seen = 0
  for (let i = 0; i < doc.lines.length && seen < 15; i++) {
    const line = doc.lines[i]!
    if (line.cells.length === 0) continue
    seen++
    for (const cell of line.cells) {
      if (customer.has(cell) || labelled(cell)) continue
      const text = cleanIssuer(cell.text)
      if (!isCandidateText(text)) continue
      let score = 0.45
      if (hasCompanySuffix(text)) score += 0.3
      if (seen <= 3) score += 0.1
      else if (seen > 8) score -= 0.1
      const below = doc.lines.slice(i + 1, i + 3).flatMap((l) => l.cells.filter((c) => c.column === cell.column))
      if (below.some((c) => ADDRESS.test(c.text))) score += 0.1
      if (!best || score > best.score + 1e-9) best = { cell, score }
    }
  }
  if (!best) {
    for (const line of doc.lines) {
      for (const cell of line.cells) {
        if (customer.has(cell) || labelled(cell)) continue
        const text = cleanIssuer(cell.text)
        if (hasCompanySuffix(text) && isCandidateText(text))
          return { value: text, confidence: 0.4, index: cell.start, length: text.length, currency: null, hit: null }
      }
    }
    return null
  }
  const value = cleanIssuer(best.cell.text)
  return {
    value,
    confidence: Math.min(0.75, best.score),
    index: best.cell.start,
    length: value.length,
    currency: null,
    hit: null,
  }
}
