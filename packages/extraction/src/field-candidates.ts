import { findLabelHits, type LabelGroup, type LabelHit, type LabelSpec } from './label-matching.ts'
import { findAmounts } from './normalise-amount.ts'
import { findCurrencyMentions, normaliseCurrency } from './normalise-currency.ts'
import { findDates, type DateOrder } from './normalise-date.ts'
import type { FieldType } from './schema.ts'
import { cellAt, lineIndexAt, trimTrailingPunctuation, type Cell, type Line, type TextDoc } from './text-lines.ts'

/** How a field is read: its type, its labels and a few reading rules. */
export type FieldSpec = {
  name: string
  type: FieldType
  labels: LabelSpec[]
  /** An identifier (invoice number, reference): one token, normally with a digit. */
  idLike?: boolean
  /** On equal confidence prefer the later occurrence (totals sit at the bottom). */
  preferLast?: boolean
  /** Extra check on a string value (e.g. an issuer must contain letters). */
  accept?: (value: string) => boolean
}

export type Candidate = {
  value: string | number
  confidence: number
  /** Offset of the value in the text. */
  index: number
  /** Length of the value as written (for its position on the page); unknown for derived values. */
  length?: number
  /** Currency written next to an amount (or in the label, "Total (EUR)"). */
  currency: string | null
  hit: LabelHit | null
}

export type ReadContext = {
  doc: TextDoc
  hits: LabelHit[]
  /** The type of each field key, to match a header row of labels with a row of values. */
  types?: ReadonlyMap<string, FieldType>
  dateOrder?: DateOrder
  dateOrderGuessed?: boolean
}

type Parsed = { value: string | number; quality: number; currency: string | null; offset: number; length: number }

const DECORATION =
  /^[ \t]*(?:\(([^()\n]{0,24})\)|\[([^[\]\n]{0,24})\])?[ \t]*(?:in[ \t]+([A-Z]{3}|[€$£¥])[ \t]*)?[:#=.\-–—]*[ \t]*/u
const ID_DECORATION = /^(?:(?:no|nr|number|num|n0)\.?(?![\p{L}\p{N}])|#|n[°º])?[ \t]*[:#.\-–—]*[ \t]*/iu
const FILLER_TOKENS = new Set(['no', 'no.', 'nr', 'nr.', 'number', '#', 'num', 'n°', 'nº', 'n0', ':', '-', 'is', 'de'])
const CELL_GAP = /\s{2,}|\s*\|\s*/
/** A space, a minus sign and a digit: the sign of the number, not decoration after the label. */
const SIGNED_NUMBER = /^[ \t][-−–]\d$/

/** Reads a typed value from the start of `window`. */
export function parseValue(
  window: string,
  spec: FieldSpec,
  ctx: Pick<ReadContext, 'dateOrder' | 'dateOrderGuessed'>,
): Parsed | null {
  if (!window.trim()) return null
  switch (spec.type) {
    case 'date': {
      const date = findDates(window, { order: ctx.dateOrder, guessed: ctx.dateOrderGuessed })[0]
      if (!date) return null
      // A date far into the window belongs to something else.
      const quality = date.quality * (window.slice(0, date.index).trim().length > 20 ? 0.7 : 1)
      return { value: date.value, quality, currency: null, offset: date.index, length: date.length }
    }
    case 'amount':
    case 'number': {
      const amounts = findAmounts(window)
      const amount = amounts.find((a) => a.quality === 1) ?? amounts[0]
      if (!amount) return null
      const quality = amount.quality * (window.slice(0, amount.index).replace(/[^\p{L}]/gu, '').length > 12 ? 0.8 : 1)
      return { value: amount.value, quality, currency: amount.currency, offset: amount.index, length: amount.length }
    }
    case 'currency': {
      const mention = findCurrencyMentions(window)[0]
      const code = mention?.code ?? normaliseCurrency(window.split(/\s+/)[0] ?? '')
      if (!code) return null
      return { value: code, quality: 1, currency: code, offset: mention?.index ?? 0, length: mention?.length ?? 3 }
    }
    case 'string':
      return spec.idLike ? parseIdentifier(window) : parsePlainString(window, spec)
  }
}

function parseIdentifier(window: string): Parsed | null {
  let seen = 0
  for (const m of window.matchAll(/\S+/g)) {
    if (++seen > 4) break
    const raw = m[0]
    const token = raw.replace(/^[#:]+/, '').replace(/[.,;:)\]]+$/, '')
    if (!token || FILLER_TOKENS.has(token.toLowerCase())) continue
    if (!/^[\p{L}\p{N}][\p{L}\p{N}\-/_.]*$/u.test(token) || token.length > 40) return null
    const date = findDates(token)[0]
    if (date && date.length === token.length) return null
    const at = m.index + raw.indexOf(token)
    if (/\d/.test(token)) {
      const whole = continuedIdentifier(token, window.slice(at + token.length))
      return { value: whole.value, quality: 1, currency: null, offset: at, length: whole.length }
    }
    if (/^[A-Z0-9-]{4,}$/.test(token))
      return { value: token, quality: 0.6, currency: null, offset: at, length: token.length }
    return null
  }
  return null
}

/**
 * An identifier that a PDF's text runs or a writer's spacing split apart: "RE-20201121 / 508" and "RE-20 201121/508"
 * are one number. The rest joins when a single space (never a column gap) separates it and the joint is a slash or
 * a hyphen, or the rest is digits holding one; a date, an amount or a word after the id is never part of it.
 */
const ID_REST = /^(?: ?([/-]) ?| )(\d[\d/-]*)(?=$|[ \t,;)\]]|\.(?!\d))/
function continuedIdentifier(token: string, rest: string): { value: string; length: number } {
  const alone = { value: token, length: token.length }
  const m = ID_REST.exec(rest)
  if (!m) return alone
  const [written, joint, tail] = m as unknown as [string, string | undefined, string]
  if (!joint && (!/[/-]/.test(tail) || !/\p{N}$/u.test(token))) return alone
  const date = findDates(tail)[0]
  if (date && date.length === tail.length) return alone
  return { value: `${token}${joint ?? ''}${tail}`, length: token.length + written.length }
}

function parsePlainString(window: string, spec: FieldSpec): Parsed | null {
  const lead = window.length - window.trimStart().length
  const trimmed = window
    .trim()
    .replace(/^[:#\-–—.\s]+/, '')
    .slice(0, 200)
  const value = trimTrailingPunctuation(trimmed)
  if (!/[\p{L}\p{N}]/u.test(value)) return null
  if (spec.accept && !spec.accept(value)) return null
  return {
    value,
    quality: 0.9,
    currency: null,
    offset: lead + window.trim().indexOf(value.slice(0, 8)),
    length: value.length,
  }
}

function skipDecoration(text: string, from: number, spec: FieldSpec): { pos: number; currency: string | null } {
  const rest = text.slice(from, from + 80)
  const m = DECORATION.exec(rest)
  let pos = from + (m?.[0].length ?? 0)
  // A minus sign after a space belongs to the number ("Rounding Adj   -0.02"); "Total:-120" stays a separator.
  if ((spec.type === 'amount' || spec.type === 'number') && SIGNED_NUMBER.test(text.slice(pos - 2, pos + 1))) pos--
  const inside = m?.[1] ?? m?.[2] ?? m?.[3]
  const currency = inside ? normaliseCurrency(inside) : null
  if (spec.idLike) {
    const id = ID_DECORATION.exec(text.slice(pos, pos + 20))
    pos += id?.[0].length ?? 0
  }
  return { pos, currency }
}

/** Where the next label on the line starts; a label word inside a value ("Fast Freight Ltd") does not count. */
function nextHitStart(ctx: ReadContext, from: number, to: number): number {
  const text = ctx.doc.text
  for (const hit of ctx.hits) {
    if (hit.start < from || hit.start >= to) continue
    const after = text.slice(hit.end, hit.end + 30)
    const before = text.slice(Math.max(from, hit.start - 3), hit.start)
    const labelLike =
      /^[ \t]*(?:\([^()\n]{0,24}\)[ \t]*)?[:#=]/.test(after) ||
      /^(?:[ \t]{2,}|[ \t]*$)/.test(after) ||
      /(?:[ \t]{2,}|\|[ \t]*)$/.test(before) ||
      hit.start === from
    if (labelLike) return hit.start
  }
  return to
}

function startsWithLabel(ctx: ReadContext, from: number, to: number): boolean {
  const text = ctx.doc.text.slice(from, to)
  const lead = text.length - text.trimStart().length
  return ctx.hits.some((h) => h.start === from + lead)
}

/** Reads the value a label points at: same line, else the line below (same column, or by order). */
export function readHit(ctx: ReadContext, hit: LabelHit, spec: FieldSpec): Candidate | null {
  const { doc } = ctx
  const lineIndex = lineIndexAt(doc, hit.end)
  const line = doc.lines[lineIndex] as Line
  const { pos, currency: labelCurrency } = skipDecoration(doc.text, hit.end, spec)

  const make = (parsed: Parsed, factor: number, windowStart: number): Candidate => ({
    value: parsed.value,
    confidence: Math.round(Math.min(1, hit.label.weight * factor * parsed.quality) * 1000) / 1000,
    index: windowStart + parsed.offset,
    length: parsed.length,
    currency: parsed.currency ?? labelCurrency,
    hit,
  })

  // 1. Same line, up to the next label (and, for text, up to the next column gap).
  if (pos <= line.end) {
    let window = doc.text.slice(pos, nextHitStart(ctx, pos, line.end))
    if (spec.type === 'string') {
      const gap = CELL_GAP.exec(window)
      if (gap) window = window.slice(0, gap.index)
    }
    const parsed = parseValue(window, spec, ctx)
    if (parsed) return make(parsed, 1, pos)
    // Text that is no value ends the search, unless a column gap parts it from the label: then it is the next
    // cell of a row of labels ("Factuurnr.   Besteldatum   Datum"), and the value sits below.
    const acrossGap = /\s{2,}|\|/.test(doc.text.slice(hit.end, pos + window.length - window.trimStart().length))
    if (window.trim() && spec.type === 'string' && !acrossGap) return null
  }

  // 2. The next non-empty line (one blank line may sit between).
  let below: Line | undefined
  for (let i = lineIndex + 1; i <= lineIndex + 2 && i < doc.lines.length; i++) {
    const candidate = doc.lines[i] as Line
    if (candidate.cells.length > 0) {
      below = candidate
      break
    }
  }
  if (!below) return null
  const labelLineStart = doc.lines[lineIndexAt(doc, hit.start)] as Line
  const labelCell = cellAt(labelLineStart, hit.start)
  // One span matched by labels of two fields (an invoice number and a reference) is one label.
  const sameLineHits: LabelHit[] = []
  for (const h of ctx.hits) {
    if (h.start < labelLineStart.start || h.start > line.end || h.key.startsWith('#')) continue
    if ((h !== hit && h.start === hit.start) || sameLineHits.some((o) => o.start === h.start)) continue
    sameLineHits.push(h)
  }
  const multiColumn = labelLineStart.cells.length > 1 || below.cells.length > 1

  if (multiColumn && labelCell) {
    const cell = cellBelow(labelCell, below.cells)
    if (cell && !startsWithLabel(ctx, cell.start, cell.end)) {
      const parsed = parseValue(doc.text.slice(cell.start, cell.end), spec, ctx)
      if (parsed) return make(parsed, 0.9, cell.start)
    }
    if (labelLineStart.cells.length > 1 && below.cells.length === labelLineStart.cells.length) return null
  }
  if (startsWithLabel(ctx, below.start, below.end)) return null

  const belowText = doc.text.slice(below.start, below.end)
  if (sameLineHits.length > 1) {
    // A header row of several labels over a row of values: match them up.
    const piece = pickFromRow(ctx, belowText, sameLineHits, hit, spec)
    if (!piece) return null
    const parsed = parseValue(piece.text, spec, ctx)
    return parsed ? make(parsed, piece.factor, below.start + piece.offset) : null
  }
  const window = spec.type === 'string' ? (below.cells[0]?.text ?? '') : belowText
  const windowStart = spec.type === 'string' ? (below.cells[0]?.start ?? below.start) : below.start
  const parsed = parseValue(window, spec, ctx)
  return parsed ? make(parsed, 0.85, windowStart) : null
}

/**
 * The cell under a label's cell: by position on the page when known (the cell overlapping it
 * most, else the nearest one within a label's width), else by column order.
 */
function cellBelow(labelCell: Cell, cells: readonly Cell[]): Cell | undefined {
  const x = labelCell.x
  if (!x || cells.some((c) => !c.x)) return cells.find((c) => c.column === labelCell.column)
  const width = x[1] - x[0]
  let best: { cell: Cell; score: number } | undefined
  for (const cell of cells) {
    const [c0, c1] = cell.x!
    const overlap = Math.min(x[1], c1) - Math.max(x[0], c0)
    const distance = Math.abs((c0 + c1) / 2 - (x[0] + x[1]) / 2)
    const score = overlap > 0 ? 1 + overlap : distance <= width ? -distance : Number.NEGATIVE_INFINITY
    if (score > Number.NEGATIVE_INFINITY && (!best || score > best.score)) best = { cell, score }
  }
  return best?.cell
}

type Piece = { text: string; offset: number; factor: number }

/**
 * The value under `hit` in a row of values below a row of labels: by column gaps when the counts
 * match; else by the order of values of the field's type among labels of that type ("Invoice
 * Date  Due Date" over two dates); else, for text, what is left once dates and amounts are removed.
 */
function pickFromRow(
  ctx: ReadContext,
  row: string,
  rowHits: readonly LabelHit[],
  hit: LabelHit,
  spec: FieldSpec,
): Piece | null {
  const ordinal = rowHits.indexOf(hit)
  const byGap: Array<{ text: string; offset: number }> = []
  let offset = 0
  for (const part of row.split(/(\s{2,}|\s*\|\s*)/)) {
    if (part.trim() && !/^\s*\|?\s*$/.test(part)) byGap.push({ text: part, offset })
    offset += part.length
  }
  if (byGap.length === rowHits.length && byGap[ordinal]) return { ...byGap[ordinal]!, factor: 0.85 }

  const typeOf = (h: LabelHit): FieldType | undefined => (h === hit ? spec.type : ctx.types?.get(h.key))
  const sameType = rowHits.filter((h) => typeOf(h) === spec.type)
  const typedOrdinal = sameType.indexOf(hit)
  const spans = (values: Array<{ index: number; length: number }>): Array<{ text: string; offset: number }> =>
    values.map((v) => ({ text: row.slice(v.index, v.index + v.length), offset: v.index }))
  const dates = spans(findDates(row, { order: ctx.dateOrder, guessed: ctx.dateOrderGuessed }))
  const amounts = spans(findAmounts(row).filter((a) => a.quality === 1 || spec.type === 'number'))
  if (spec.type === 'date' || spec.type === 'amount' || spec.type === 'number') {
    const values = spec.type === 'date' ? dates : amounts
    if (values.length === sameType.length && values[typedOrdinal]) return { ...values[typedOrdinal]!, factor: 0.8 }
    return null
  }
  if (spec.type === 'string') {
    let rest = row
    for (const span of [...dates, ...amounts])
      rest = rest.slice(0, span.offset) + ' '.repeat(span.text.length) + rest.slice(span.offset + span.text.length)
    const tokens: Array<{ text: string; offset: number }> = []
    for (const m of rest.matchAll(/\S+/g)) tokens.push({ text: m[0], offset: m.index })
    if (tokens.length === sameType.length && tokens[typedOrdinal]) return { ...tokens[typedOrdinal]!, factor: 0.8 }
    if (sameType.length === 1 && tokens.length > 0)
      return { text: rest.slice(tokens[0]!.offset), offset: tokens[0]!.offset, factor: 0.75 }
  }
  return null
}

/** Label hits for every field (plus stop labels), then one candidate per hit, grouped by field. */
export function collectCandidates(
  ctx: Omit<ReadContext, 'hits'>,
  specs: readonly FieldSpec[],
  stopLabels: readonly LabelSpec[],
): { hits: LabelHit[]; candidates: Map<string, Candidate[]> } {
  const groups: LabelGroup[] = specs.map((s) => ({ key: s.name, labels: s.labels }))
  if (stopLabels.length) groups.push({ key: '#stop', labels: [...stopLabels] })
  const hits = findLabelHits(ctx.doc.text, groups)
  const full: ReadContext = { ...ctx, hits, types: new Map(specs.map((spec) => [spec.name, spec.type])) }
  const candidates = new Map<string, Candidate[]>()
  for (const spec of specs) {
    const list: Candidate[] = []
    for (const hit of hits) {
      if (hit.key !== spec.name) continue
      const candidate = readHit(full, hit, spec)
      if (candidate) list.push(candidate)
    }
    candidates.set(spec.name, list)
  }
  return { hits, candidates }
}

/** The best candidate: highest confidence; ties go to the earlier one (or the later, for totals). */
export function bestCandidate(list: readonly Candidate[], preferLast = false): Candidate | undefined {
  let best: Candidate | undefined
  for (const c of list) {
    if (!best || c.confidence > best.confidence + 1e-9) best = c
    else if (Math.abs(c.confidence - best.confidence) <= 1e-9 && preferLast && c.index > best.index) best = c
  }
  return best
}
