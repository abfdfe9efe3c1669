import type { DocumentInput, DocumentSource } from './document-source.ts'
import { OCR_CONFIDENCE_FLOOR } from './field-provenance.ts'
import { ITEM_HEADER_WORDS, ITEM_TABLE_END_WORDS, type ItemColumn } from './line-item-labels.ts'
import { findAmounts, normaliseAmount } from './normalise-amount.ts'
import { ISO_4217_CODES } from './normalise-currency.ts'
import { type Box, tidyBox, unionBox } from './page-layout.ts'
import type { FieldValue, LineItem } from './schema.ts'
import { type Line, type TextDoc, toTextDoc } from './text-lines.ts'
import { documentSource, textSource } from './document-source.ts'

/** A cell read in a column under a recognised header; one read from a till slip's row (no header). */
const HEADED_CELL = 0.8
const TILL_CELL = 0.7
/** A quantity of 1 or a unit price equal to the amount, not written but implied by a row with one figure. */
const IMPLIED_CELL = 0.6
/** A figure computed from the other two (amount ÷ quantity). */
const DERIVED_CELL = 0.6
/** quantity × unit price = amount: every cell of the row gains this, up to CHECKED_CEILING. */
const ROW_CHECKED_BONUS = 0.15
const CHECKED_CEILING = 0.97
/** quantity × unit price ≠ amount: the figures keep this share. */
const ROW_CONTRADICTED = 0.6
/** The amounts add up to the subtotal or total: they gain this; they do not: they keep SUM_CONTRADICTED. */
const SUM_CHECKED_BONUS = 0.05
const SUM_CONTRADICTED = 0.85
/** A header needs its words to be most of its line (a sentence naming "price" and "total" is no header). */
const HEADER_COVERAGE = 0.6
/** Blank lines inside a table (a page or block gap) before it is taken to have ended. */
const MAX_BLANKS = 2
/** A figure whose right edge is this far (page fractions) left of the first figure column belongs to the description. */
const DESCRIPTION_MARGIN = 0.02

type Token = { text: string; start: number; end: number }
type Column = { column: ItemColumn; start: number; end: number; x?: [number, number]; chars: [number, number] }
type Cell = { value: string | number | null; confidence: number; at?: Array<[number, number]> }
type Row = Record<'description' | 'quantity' | 'unit_price' | 'amount', Cell>

const NUMERIC = /^[-−]?\(?(?:[$€£₹¥]|RM|S\$|HK\$|Rs\.?)?\d[\d.,'’]*(?:[€$£]|zł|zl)?\)?$/
const CURRENCY_MARK = /^(?:[$€£₹¥]|RM|S\$|HK\$|Rs\.?|zł|zl)$/
/** A currency mark or ISO code standing alone ("TEA" is an item, "EUR" a currency). */
const currencyOnly = (text: string): boolean => CURRENCY_MARK.test(text) || ISO_4217_CODES.has(text)
const UNIT_WORDS = /^(?:x|×|@|pcs|pc|stk\.?|st\.?|h|hrs?|ea|each|kg|m|uds?\.?)$/i
// "2 x", also as OCR reads it off a till slip: "2x", "2X.", "2.x".
const QTY_TIMES = /^(\d{1,4}(?:[.,]\d{1,3})?)\.?\s*[x×*]{1,2}\.?\s+(.+)$/i
const TIMES_PRICE = /^(.*?)\s*(\d{1,4}(?:[.,]\d{1,3})?)\.?\s*[x×*@]\.?\s*((?:[$€£₹]|RM|Rs\.?)?\s?\d[\d.,]*\d)\s*$/i
/** A till's quantity line as OCR may garble it ("3.x:17.38", "2. % 9.38"): a small count, marks, a price. */
const LOOSE_QTY_LINE = /^(\d{1,2})[\s.:,;%xX×*@]{1,5}(\d{1,4}[.,:]\d{2})$/
/** "32:52", "11-91": a decimal mark OCR read as a colon or a hyphen, in a till's amount column. */
const misreadDecimal = (text: string): string => text.replace(/^(\d+)[:-](\d{2})$/, `$1.$2`)
const MISREAD_AMOUNT = /(?<![\d.,:-])\d+[:-]\d{2}(?![\d.,:-])/
/** A line of one short word among a till's items ("SUSI" for "3 x 11,19"): a misread quantity line, passed over. */
const SHORT_NOISE = 6
const RULE_LINE = /^[\s\-=_*.~]+$/

const round2 = (n: number): number => Math.round(n * 100) / 100
const clamp01 = (n: number): number => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100

/**
 * Tokens of a line (whitespace-separated), with absolute offsets. In a decimal-comma document a thousands group split
 * by one space is rejoined ("1 234,56"); elsewhere "12 150.00" is a quantity and a price.
 */
function tokens(line: Line, decimal: ',' | '.' = '.'): Token[] {
  const out: Token[] = []
  for (const m of line.text.matchAll(/\S+/g)) {
    const start = line.start + m.index
    const prev = out[out.length - 1]
    // "1 234,56": a group of three digits one space after 1-3 digits continues the number.
    const group = decimal === ',' && /^\d{3}(?:,\d{1,2})?$/.test(m[0])
    if (prev && group && start === prev.end + 1 && /^\d{1,3}$/.test(prev.text)) {
      prev.text = `${prev.text}${m[0]}`
      prev.end = start + m[0].length
      continue
    }
    out.push({ text: m[0], start, end: start + m[0].length })
  }
  return out
}

/** The document's decimal separator, from its amounts written with two decimals. */
export function decimalConvention(text: string): ',' | '.' {
  let comma = 0
  let dot = 0
  for (const m of text.matchAll(/\d([.,])\d{2}(?![\d.,])/g))
    if (m[1] === ',') comma++
    else dot++
  return comma > dot ? ',' : '.'
}

/**
 * A written figure as a number in the document's convention: normaliseAmount's reading, except that a single
 * separator before exactly three digits ("1,250" / "1.250") is read the document's way (a decimal comma document
 * writes 1,250 for one and a quarter, and 1.250 for twelve hundred and fifty).
 */
function cellNumber(raw: string, decimal: ',' | '.'): number | null {
  const digits = raw.replace(/^[^\d-−(]+|[^\d)]+$/g, '')
  const value = normaliseAmount(raw) ?? normaliseAmount(digits)
  const single = /^[-−(]?\d{1,3}([.,])\d{3}\)?$/.exec(digits)
  if (value !== null && single) {
    const n = Number(digits.replace(/[()−-]/g, '').replace(single[1] as string, single[1] === decimal ? '.' : ''))
    return /^[-−(]/.test(digits) ? -n : n
  }
  return value
}

function numeric(t: Token): boolean {
  return NUMERIC.test(t.text) && /\d/.test(t.text)
}

/** The header words of a line, when the line is a table header; else null. */
function headerOf(line: Line, source: DocumentSource): Column[] | null {
  const lower = line.text.toLowerCase()
  const taken = new Array<boolean>(lower.length).fill(false)
  const hits: Column[] = []
  for (const word of ITEM_HEADER_WORDS) {
    const w = word.text.toLowerCase()
    let from = 0
    for (let at = lower.indexOf(w, from); at >= 0; at = lower.indexOf(w, from)) {
      from = at + 1
      const before = lower[at - 1] ?? ' '
      const after = lower[at + w.length] ?? ' '
      if (/[\p{L}\p{N}]/u.test(before) || /[\p{L}\p{N}]/u.test(after)) continue
      if (taken.slice(at, at + w.length).some(Boolean)) continue
      taken.fill(true, at, at + w.length)
      const start = line.start + at
      const x = source.xRange(start, start + w.length)
      hits.push({ column: word.column, start, end: start + w.length, chars: [at, at + w.length], ...(x ? { x } : {}) })
    }
  }
  const columns = new Set(hits.map((h) => h.column))
  const figures = ['quantity', 'unit_price', 'amount'].filter((c) => columns.has(c as ItemColumn)).length
  if (!columns.has('description') || figures < 1 || columns.size < 3 - (columns.has('amount') ? 1 : 0)) return null
  const covered = taken.filter(Boolean).length
  if (covered < HEADER_COVERAGE * line.text.replace(/\s/g, '').length) return null
  if (findAmounts(line.text).some((a) => a.quality === 1)) return null
  // One column per kind: the leftmost word of each.
  hits.sort((a, b) => a.start - b.start)
  return hits.filter((h, i) => hits.findIndex((o) => o.column === h.column) === i)
}

function endsTable(line: Line): boolean {
  const text = line.text.trim().toLowerCase()
  return ITEM_TABLE_END_WORDS.some((w) => {
    const l = w.toLowerCase()
    return text.startsWith(l) && !/[\p{L}\p{N}]/u.test(text[l.length] ?? ' ')
  })
}

const blank = (line: Line): boolean => line.text.trim() === ''

/** A cell read from a token. */
const read = (value: string | number | null, confidence: number, t?: Token): Cell => ({
  value,
  confidence,
  ...(t ? { at: [[t.start, t.end]] } : {}),
})
const none = (): Cell => ({ value: null, confidence: 0 })

const skippable = (t: Token): boolean =>
  currencyOnly(t.text) || UNIT_WORDS.test(t.text) || /^\d{1,2}(?:[.,]\d+)?\s?%$|^%$/.test(t.text)

/** The figures at the end of a row (currency marks and units between them skipped), and the tokens before them. */
function splitTail(toks: readonly Token[]): { text: Token[]; figures: Token[] } {
  let i = toks.length
  const figures: Token[] = []
  while (i > 0) {
    const t = toks[i - 1] as Token
    if (numeric(t)) figures.unshift(t)
    else if (!skippable(t)) break
    i--
  }
  return { text: toks.slice(0, i), figures }
}

/** The words of a row before its first remaining figure (a figure given back to the description keeps its "x"). */
function wordsBefore(toks: readonly Token[], figures: readonly Token[]): Token[] {
  const first = figures[0]
  let end = first ? toks.indexOf(first) : toks.length
  while (end > 0 && skippable(toks[end - 1] as Token)) end--
  return toks.slice(0, end)
}

/** The rows under one header, until the totals block. */
function headedRows(
  doc: TextDoc,
  from: number,
  header: Column[],
  source: DocumentSource,
  decimal: ',' | '.',
): { rows: Row[]; next: number } {
  const figureColumns = header.filter((h) => h.column !== 'description' && h.column !== 'position')
  const positioned = figureColumns.every((h) => h.x)
  const firstFigureX = Math.min(...figureColumns.map((h) => h.x?.[0] ?? Number.POSITIVE_INFINITY))
  const hasPosition = header.some((h) => h.column === 'position')
  const rows: Row[] = []
  let pending: Token[] = []
  let blanks = 0
  let i = from
  for (; i < doc.lines.length; i++) {
    const line = doc.lines[i] as Line
    if (blank(line)) {
      if (++blanks > MAX_BLANKS) break
      continue
    }
    if (RULE_LINE.test(line.text)) continue
    if (endsTable(line) || headerOf(line, source)) break
    blanks = 0
    const toks = tokens(line, decimal)
    let { text, figures } = splitTail(toks)
    if (positioned) {
      // A figure that sits under the description (a size, a model number) is part of it.
      while (
        figures.length &&
        (source.xRange(figures[0]!.start, figures[0]!.end)?.[1] ?? 1) < firstFigureX - DESCRIPTION_MARGIN
      ) {
        text = [...text, figures.shift() as Token]
      }
    }
    let quantity: Token | undefined
    if (figures.length > figureColumns.length) {
      const extra = figures.slice(0, figures.length - figureColumns.length)
      figures = figures.slice(figures.length - figureColumns.length)
      // A header whose quantity word was misread still has a quantity column: a whole number before the prices.
      const last = extra[extra.length - 1] as Token
      if (!figureColumns.some((c) => c.column === 'quantity') && /^\d{1,4}$/.test(last.text)) quantity = extra.pop()
      text = [...text, ...extra]
    }
    if (figures.length) text = wordsBefore(toks, figures)
    if (hasPosition && text.length > 1 && /^\d{1,3}\.?$/.test(text[0]!.text)) text = text.slice(1)
    if (figures.length === 0) {
      // A line of words only: the rest of the previous item's description, or the start of the next one's.
      if (rows.length && !pending.length) {
        const last = rows[rows.length - 1] as Row
        last.description = {
          ...last.description,
          value: `${last.description.value ?? ''} ${text.map((t) => t.text).join(' ')}`.trim(),
          at: [...(last.description.at ?? []), ...spans(text)],
        }
      } else pending = [...pending, ...text]
      continue
    }
    const words = [...pending, ...text]
    pending = []
    const assigned = assign(figures, figureColumns, positioned, source)
    if (quantity) assigned.set('quantity', quantity)
    const value = (c: ItemColumn): Cell => {
      const t = assigned.get(c)
      return t ? read(cellNumber(t.text, decimal), HEADED_CELL, t) : none()
    }
    rows.push(
      completeRow(
        {
          description: words.length
            ? { value: words.map((t) => t.text).join(' '), confidence: HEADED_CELL, at: spans(words) }
            : none(),
          quantity: value('quantity'),
          unit_price: value('unit_price'),
          amount: value('amount'),
        },
        figureColumns.map((c) => c.column),
      ),
    )
  }
  return { rows, next: i }
}

/** Each figure to a column: by position under the header when positions are known, else right-aligned in order. */
function assign(
  figures: readonly Token[],
  columns: readonly Column[],
  positioned: boolean,
  source: DocumentSource,
): Map<ItemColumn, Token> {
  const out = new Map<ItemColumn, Token>()
  if (positioned && figures.length !== columns.length) {
    for (const f of figures) {
      const x = source.xRange(f.start, f.end)
      if (!x) continue
      let best: Column | undefined
      let bestDistance = Number.POSITIVE_INFINITY
      for (const c of columns) {
        if (out.has(c.column) || !c.x) continue
        const overlap = Math.min(x[1], c.x[1]) - Math.max(x[0], c.x[0])
        const distance = overlap > 0 ? -overlap : Math.min(Math.abs(x[1] - c.x[1]), Math.abs(x[0] - c.x[0]))
        if (distance < bestDistance) {
          bestDistance = distance
          best = c
        }
      }
      if (best) out.set(best.column, f)
    }
    return out
  }
  const offset = columns.length - figures.length
  figures.forEach((f, i) => {
    const c = columns[i + offset]
    if (c) out.set(c.column, f)
  })
  return out
}

const spans = (toks: readonly Token[]): Array<[number, number]> => toks.map((t) => [t.start, t.end])

/**
 * Fills what a row does not write from what it does (a missing quantity is 1 when the price is the amount; a missing
 * price or amount from the other two), then checks quantity × unit price = amount.
 */
function completeRow(row: Row, columns: readonly ItemColumn[]): Row {
  const q = typeof row.quantity.value === 'number' ? row.quantity.value : null
  const p = typeof row.unit_price.value === 'number' ? row.unit_price.value : null
  const a = typeof row.amount.value === 'number' ? row.amount.value : null
  if (a !== null && q === null && p === null) {
    row.quantity = { value: 1, confidence: IMPLIED_CELL }
    row.unit_price = { value: a, confidence: IMPLIED_CELL }
  } else if (a !== null && q !== null && p === null && q !== 0) {
    row.unit_price = { value: round2(a / q), confidence: DERIVED_CELL }
  } else if (a !== null && q === null && p !== null) {
    const derived = p !== 0 ? a / p : Number.NaN
    row.quantity = Number.isInteger(round2(derived))
      ? { value: round2(derived), confidence: DERIVED_CELL }
      : columns.includes('quantity')
        ? none()
        : { value: 1, confidence: IMPLIED_CELL }
  } else if (a === null && q !== null && p !== null) {
    row.amount = { value: round2(q * p), confidence: DERIVED_CELL }
  }
  return checkRow(row)
}

function checkRow(row: Row): Row {
  const q = row.quantity.value
  const p = row.unit_price.value
  const a = row.amount.value
  if (typeof q !== 'number' || typeof p !== 'number' || typeof a !== 'number') return row
  const holds = Math.abs(round2(q * p) - a) <= Math.max(0.011, Math.abs(a) * 0.001)
  const adjust = (c: Cell): Cell =>
    c.value === null
      ? c
      : {
          ...c,
          confidence: holds
            ? Math.min(CHECKED_CEILING, c.confidence + ROW_CHECKED_BONUS)
            : c.confidence * ROW_CONTRADICTED,
        }
  return {
    description: holds ? adjust(row.description) : row.description,
    quantity: adjust(row.quantity),
    unit_price: adjust(row.unit_price),
    amount: adjust(row.amount),
  }
}

/**
 * A till slip's item rows (no header): the block of lines right above its first total, each ending in an amount
 * with decimals, the quantity written as `2 x NAME`, `NAME 2 @ 3.50`, or `2 x 3.50` on the line below.
 */
function tillRows(doc: TextDoc, decimal: ',' | '.'): Row[] {
  // The first total with a figure, read right or with its decimal mark misread ("113-55"); an address line
  // "VAT No 123 4567 89" is no total.
  const end = doc.lines.findIndex(
    (l) => endsTable(l) && (findAmounts(l.text).some((a) => a.quality === 1) || MISREAD_AMOUNT.test(l.text)),
  )
  if (end <= 0) return []
  const rows: Row[] = []
  let below: { qty: number; price: number; at?: Token } | null = null
  let skipped = 0
  for (let i = end - 1; i >= 0; i--) {
    const line = doc.lines[i] as Line
    if (blank(line) || RULE_LINE.test(line.text)) {
      if (rows.length && blank(line)) break
      continue
    }
    const toks = tokens(line, decimal)
    const qtyLine = TIMES_PRICE.exec(line.text.trim())
    const loose = qtyLine ? null : LOOSE_QTY_LINE.exec(line.text.trim())
    if ((qtyLine && !/\p{L}{2,}/u.test(qtyLine[1] ?? '')) || loose) {
      const qty = cellNumber((qtyLine?.[2] ?? loose?.[1]) as string, decimal)
      const price = cellNumber(misreadDecimal((qtyLine?.[3] ?? loose?.[2]) as string), decimal)
      if (qty !== null && price !== null) {
        below = { qty, price, at: toks[toks.length - 1] }
        continue
      }
    }
    for (const t of toks) t.text = misreadDecimal(t.text)
    const amountAt = toks.length - 1 - [...toks].reverse().findIndex((t) => numeric(t) && /[.,]\d{2}\)?$/.test(t.text))
    const amountTok = amountAt < toks.length ? toks[amountAt] : undefined
    const before = amountTok ? toks.slice(0, amountAt).filter((t) => !currencyOnly(t.text)) : []
    const words = before.map((t) => t.text).join(' ')
    const amount = amountTok ? cellNumber(amountTok.text, decimal) : null
    if (amount === null || !/\p{L}{2,}/u.test(words) || amountAt < toks.length - 2) {
      // A misread line between the items and the total, or a garbled quantity line (no words) among the items, is
      // passed over; a line of words that is no item ends them.
      const garbled = !/\p{L}{2,}/u.test(line.text) || (toks.length === 1 && line.text.trim().length <= SHORT_NOISE)
      if ((rows.length && !garbled) || ++skipped > MAX_BLANKS) break
      below = null
      continue
    }
    skipped = 0
    const row: Row = {
      description: { value: words, confidence: TILL_CELL, at: spans(before) },
      quantity: none(),
      unit_price: none(),
      amount: read(amount, TILL_CELL, amountTok),
    }
    const prefix = QTY_TIMES.exec(words)
    const at = TIMES_PRICE.exec(words)
    if (prefix) {
      row.quantity = read(cellNumber(prefix[1] as string, decimal), TILL_CELL, before[0])
      row.description = { ...row.description, value: prefix[2] as string, at: spans(before.slice(1)) }
    } else if (at && /\p{L}{2,}/u.test(at[1] ?? '')) {
      row.quantity = read(cellNumber(at[2] as string, decimal), TILL_CELL)
      row.unit_price = read(cellNumber(at[3] as string, decimal), TILL_CELL)
      const name = (at[1] as string).trim()
      row.description = { ...row.description, value: name, at: spans(before.slice(0, name.split(/\s+/).length)) }
    } else if (below) {
      row.quantity = read(below.qty, TILL_CELL)
      row.unit_price = read(below.price, TILL_CELL, below.at)
    }
    below = null
    rows.unshift(completeRow(row, []))
  }
  return rows
}

/** A cell as a field value: its confidence lowered by the OCR engine's doubt, and where it was read. */
function toValue(cell: Cell, source: DocumentSource): FieldValue {
  if (cell.value === null) return { value: null, confidence: 0 }
  const places = (cell.at ?? []).map(([s, e]) => source.locate(s, e))
  const boxes = places.map((p) => p.bbox).filter((b): b is Box => b !== undefined)
  const confs = places.map((p) => p.ocrConf).filter((c): c is number => c !== undefined)
  const ocr = confs.length ? OCR_CONFIDENCE_FLOOR + (1 - OCR_CONFIDENCE_FLOOR) * Math.min(...confs) : 1
  const page = places.find((p) => p.page !== undefined)?.page
  const box = unionBox(boxes)
  return {
    value: cell.value,
    confidence: clamp01(cell.confidence * ocr),
    ...(page !== undefined ? { page } : {}),
    ...(box ? { bbox: tidyBox(box) } : {}),
  }
}

/** The sum of the rows' amounts, or null when there are no rows or one has no amount. */
export function lineItemsSum(items: readonly LineItem[]): number | null {
  if (items.length === 0) return null
  let sum = 0
  for (const item of items) {
    if (typeof item.amount.value !== 'number') return null
    sum += item.amount.value
  }
  return round2(sum)
}

/**
 * The item table of an invoice or receipt, row by row (DESIGN, Extraction: `line_items`). Reads tables under a
 * header (column words per locale as data, figures assigned to columns by position when the page has word boxes,
 * else in order), rows until the totals block, descriptions over several lines; without a header, a till slip's
 * rows above its total. Each row's quantity × unit price is checked against its amount, and, when `totals` (the
 * subtotal and total the invoice extractor chose) are given, the amounts' sum against them: cells that check gain
 * confidence, cells that contradict lose it.
 */
export function findLineItems(
  source: DocumentSource,
  doc: TextDoc,
  totals: ReadonlyArray<string | number | null | undefined> = [],
): LineItem[] {
  return checkItemsAgainstTotals(readLineItems(source, doc), totals)
}

/** The item table's rows as read, before any check against the totals. */
function readLineItems(source: DocumentSource, doc: TextDoc): LineItem[] {
  const decimal = decimalConvention(doc.text)
  let rows: Row[] = []
  for (let i = 0; i < doc.lines.length; i++) {
    const header = headerOf(doc.lines[i] as Line, source)
    if (!header) continue
    const found = headedRows(doc, i + 1, header, source, decimal)
    rows.push(...found.rows)
    i = found.next - 1
  }
  if (rows.length === 0) rows = tillRows(doc, decimal)
  return rows
    .filter((r) => r.amount.value !== null || r.unit_price.value !== null)
    .map((r) => ({
      description: toValue(r.description, source),
      quantity: toValue(r.quantity, source),
      unit_price: toValue(r.unit_price, source),
      amount: toValue(r.amount, source),
    }))
}

/** Amounts that add up to the subtotal or total gain confidence; amounts that do not, lose it. */
function checkItemsAgainstTotals(
  items: LineItem[],
  totals: ReadonlyArray<string | number | null | undefined>,
): LineItem[] {
  const sum = lineItemsSum(items)
  const targets = totals.filter((t): t is number => typeof t === 'number')
  if (sum === null || targets.length === 0) return items
  const adds = targets.some((t) => Math.abs(t - sum) <= 0.011)
  return items.map((item) => ({
    ...item,
    amount: {
      ...item.amount,
      confidence: clamp01(
        adds ? Math.min(0.99, item.amount.confidence + SUM_CHECKED_BONUS) : item.amount.confidence * SUM_CONTRADICTED,
      ),
    },
  }))
}

/** The line items of a document given as plain text or as pages (with word positions, each cell says where it was read). */
export function extractLineItems(input: string | DocumentInput): LineItem[] {
  const source = typeof input === 'string' ? textSource(input) : documentSource(input)
  return findLineItems(source, toTextDoc(source.text, source.xRange))
}
