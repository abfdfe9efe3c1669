import type { ReceiptSpec } from './corpus-receipts.ts'
import { formatNumber, type DocSpec } from './corpus-spec.ts'

/** A piece of text placed on a page: x, y in points from the top left (x is the right edge when `right`). */
export type Placed = { text: string; x: number; y: number; size: number; bold?: boolean; right?: boolean }
/** A ruled line (a table border), in points from the top left. */
export type Rule = { x0: number; y0: number; x1: number; y1: number }
export type PageModel = {
  width: number
  height: number
  font: 'sans' | 'serif' | 'mono'
  items: Placed[]
  rules?: Rule[]
}

export type LayoutId =
  | 'classic'
  | 'header-row'
  | 'sidebar'
  | 'far-right'
  | 'sentence'
  | 'boxed'
  | 'label-table'
  | 'booking'
/** Layouts tuned on; the held-out part adds the last two, which tuning never sees. */
export const TUNED_LAYOUTS: readonly LayoutId[] = ['classic', 'header-row', 'sidebar', 'far-right', 'sentence', 'boxed']
export const HOLDOUT_LAYOUTS: readonly LayoutId[] = [...TUNED_LAYOUTS, 'label-table', 'booking']

const A4 = { width: 595, height: 842 }

/** Words that head a position column, per locale language (the extractor has its own vocabulary). */
const POSITION_HEADS: Record<string, string> = { de: 'Pos.', fr: 'N°', nl: 'Nr.', es: 'N.º', it: 'N.', en: '#' }

function drawItems(spec: DocSpec, top: number, out: Placed[], rules: Rule[]): number {
  const [desc, qty, price, amount] = spec.locale.columns
  const { position = false, bordered = false } = spec.table ?? {}
  const descX = position ? 78 : 50
  const y0 = top
  if (position) out.push({ text: POSITION_HEADS[spec.locale.id.slice(0, 2)] ?? '#', x: 50, y: y0, size: 9, bold: true })
  out.push({ text: desc, x: descX, y: y0, size: 9, bold: true })
  out.push({ text: qty, x: 330, y: y0, size: 9, bold: true, right: true })
  out.push({ text: price, x: 440, y: y0, size: 9, bold: true, right: true })
  out.push({ text: amount, x: 545, y: y0, size: 9, bold: true, right: true })
  const edges: number[] = [y0 - 11, y0 + 6]
  let y = y0 + 18
  spec.lines.forEach((line, i) => {
    if (position) out.push({ text: String(i + 1), x: 50, y, size: 9 })
    out.push({ text: line.description, x: descX, y, size: 9 })
    out.push({ text: String(line.qty), x: 330, y, size: 9, right: true })
    out.push({ text: formatNumber(line.price, spec.locale), x: 440, y, size: 9, right: true })
    out.push({ text: formatNumber(line.qty * line.price, spec.locale), x: 545, y, size: 9, right: true })
    if (line.detail) {
      y += 11
      out.push({ text: line.detail, x: descX, y, size: 8 })
    }
    edges.push(y + 5)
    y += 15
  })
  if (bordered) {
    const bottom = edges[edges.length - 1] as number
    for (const e of edges) rules.push({ x0: 45, y0: e, x1: 550, y1: e })
    for (const x of [45, ...(position ? [72] : []), 285, 340, 450, 550])
      rules.push({ x0: x, y0: y0 - 11, x1: x, y1: bottom })
  }
  return y + 15
}

/** Subtotal, tax and total, then the tax summary when the document has one. */
function totalsBlock(spec: DocSpec, top: number, out: Placed[], labelX = 360): void {
  const rows: Array<[string, number, boolean]> = [
    [spec.labels.subtotal, spec.subtotal, false],
    [spec.labels.tax, spec.tax, false],
    [spec.labels.total, spec.total, true],
  ]
  rows.forEach(([label, value, bold], i) => {
    out.push({ text: label, x: labelX, y: top + i * 16, size: 10, bold })
    out.push({ text: spec.money(value), x: 545, y: top + i * 16, size: 10, bold, right: true })
  })
  if (spec.summary) taxSummary(spec, top + rows.length * 16 + 24, out)
}

/** A tax summary: heading, then net, tax and gross of the one rate, as ERP tools print under the totals. */
function taxSummary(spec: DocSpec, top: number, out: Placed[]): void {
  const { heading, net, tax, gross } = spec.locale.summary
  out.push({ text: heading, x: 50, y: top, size: 9, bold: true })
  const columns: Array<[string, string]> = [
    ['%', `${spec.locale.taxRate}%`],
    [net, formatNumber(spec.subtotal, spec.locale)],
    [tax, formatNumber(spec.tax, spec.locale)],
    [gross, formatNumber(spec.total, spec.locale)],
  ]
  columns.forEach(([head, value], i) => {
    out.push({ text: head, x: 160 + i * 90, y: top, size: 9, bold: true, right: true })
    out.push({ text: value, x: 160 + i * 90, y: top + 13, size: 9, right: true })
  })
}

function issuerBlock(spec: DocSpec, x: number, y: number, out: Placed[]): void {
  out.push({ text: spec.issuer, x, y, size: 14, bold: true })
  out.push({ text: spec.street, x, y: y + 16, size: 9 })
  out.push({ text: `${spec.city}, ${spec.locale.country}`, x, y: y + 28, size: 9 })
}

function customerBlock(spec: DocSpec, x: number, y: number, out: Placed[]): void {
  out.push({ text: spec.labels.billTo, x, y, size: 9, bold: true })
  out.push({ text: spec.customer, x, y: y + 13, size: 9 })
  out.push({ text: spec.locale.cities[0] ?? '', x, y: y + 25, size: 9 })
}

/** The page for an invoice in one of the layouts. */
export function invoicePage(spec: DocSpec, layout: LayoutId, font: PageModel['font']): PageModel {
  const out: Placed[] = []
  const rules: Rule[] = []
  const itemsTable = (s: DocSpec, top: number, o: Placed[]): number => drawItems(s, top, o, rules)
  const n = spec.number
  const other: Array<[string, string]> = spec.otherDate ? [[spec.otherDate.label, spec.otherDate.text]] : []
  const meta: Array<[string, string]> = [
    ...(n ? [[n.label, n.value] as [string, string]] : []),
    ...(spec.otherDate?.before ? other : []),
    [spec.labels.date, spec.dateText],
    ...(spec.otherDate && !spec.otherDate.before ? other : []),
    ...(spec.dueText ? [[spec.labels.due, spec.dueText] as [string, string]] : []),
  ]
  switch (layout) {
    case 'classic': {
      issuerBlock(spec, 50, 60, out)
      out.push({ text: spec.labels.title, x: 545, y: 62, size: 20, bold: true, right: true })
      meta.forEach(([l, v], i) => out.push({ text: `${l}: ${v}`, x: 545, y: 95 + i * 14, size: 10, right: true }))
      customerBlock(spec, 50, 150, out)
      totalsBlock(spec, itemsTable(spec, 230, out), out)
      break
    }
    case 'header-row': {
      issuerBlock(spec, 50, 50, out)
      out.push({ text: spec.labels.title, x: 50, y: 120, size: 18, bold: true })
      meta.forEach(([l, v], i) => {
        out.push({ text: l, x: 50 + i * 165, y: 150, size: 9, bold: true })
        out.push({ text: v, x: 50 + i * 165, y: 164, size: 10 })
      })
      customerBlock(spec, 50, 195, out)
      totalsBlock(spec, itemsTable(spec, 260, out), out)
      break
    }
    case 'sidebar': {
      out.push({ text: spec.labels.title, x: 50, y: 60, size: 22, bold: true })
      issuerBlock(spec, 300, 60, out)
      meta.forEach(([l, v], i) => {
        out.push({ text: l, x: 50, y: 110 + i * 32, size: 9, bold: true })
        out.push({ text: v, x: 50, y: 123 + i * 32, size: 10 })
      })
      customerBlock(spec, 300, 130, out)
      totalsBlock(spec, itemsTable(spec, 230, out), out, 330)
      break
    }
    case 'far-right': {
      issuerBlock(spec, 50, 60, out)
      out.push({ text: spec.labels.title, x: 50, y: 130, size: 16, bold: true })
      meta.forEach(([l, v], i) => {
        out.push({ text: l, x: 330, y: 130 + i * 15, size: 10 })
        out.push({ text: v, x: 545, y: 130 + i * 15, size: 10, right: true })
      })
      customerBlock(spec, 50, 160, out)
      totalsBlock(spec, itemsTable(spec, 240, out), out, 300)
      break
    }
    case 'sentence': {
      issuerBlock(spec, 50, 60, out)
      customerBlock(spec, 50, 120, out)
      const lead = n ? `${spec.labels.title} ${n.label} ${n.value}` : spec.labels.title
      out.push({ text: lead, x: 50, y: 180, size: 13, bold: true })
      out.push({ text: `${spec.labels.date}: ${spec.dateText}`, x: 50, y: 198, size: 10 })
      const y = itemsTable(spec, 230, out)
      out.push({ text: `${spec.labels.subtotal} ${spec.money(spec.subtotal)}`, x: 545, y, size: 10, right: true })
      out.push({ text: `${spec.labels.tax} ${spec.money(spec.tax)}`, x: 545, y: y + 15, size: 10, right: true })
      out.push({
        text: `${spec.labels.total}: ${spec.money(spec.total)}`,
        x: 545,
        y: y + 34,
        size: 12,
        bold: true,
        right: true,
      })
      break
    }
    case 'boxed': {
      out.push({ text: spec.labels.title, x: 297, y: 50, size: 20, bold: true })
      issuerBlock(spec, 50, 90, out)
      meta.forEach(([l, v], i) => out.push({ text: `${l}  ${v}`, x: 330, y: 92 + i * 14, size: 10 }))
      customerBlock(spec, 50, 160, out)
      const y = itemsTable(spec, 230, out)
      totalsBlock(spec, y, out)
      out.push({ text: `${spec.locale.country} · IBAN DE00 1234 5678 9012 3456 78`, x: 50, y: 780, size: 8 })
      break
    }
    case 'label-table': {
      out.push({ text: spec.labels.title, x: 545, y: 50, size: 18, bold: true, right: true })
      issuerBlock(spec, 50, 50, out)
      meta.forEach(([l, v], i) => {
        out.push({ text: l, x: 340, y: 90 + i * 18, size: 9, bold: true })
        out.push({ text: v, x: 450, y: 90 + i * 18, size: 9 })
      })
      customerBlock(spec, 50, 140, out)
      const y = itemsTable(spec, 230, out)
      ;[
        [spec.labels.subtotal, spec.subtotal],
        [spec.labels.tax, spec.tax],
        [spec.labels.total, spec.total],
      ].forEach(([l, v], i) => {
        out.push({ text: String(l), x: 330 + i * 75, y, size: 8, bold: true })
        out.push({ text: spec.money(Number(v)), x: 330 + i * 75, y: y + 13, size: 9 })
      })
      break
    }
    case 'booking': {
      issuerBlock(spec, 50, 50, out)
      out.push({ text: spec.labels.title, x: 50, y: 120, size: 16, bold: true })
      meta.forEach(([l, v], i) => out.push({ text: `${l}: ${v}`, x: 50, y: 145 + i * 15, size: 10 }))
      customerBlock(spec, 320, 145, out)
      totalsBlock(spec, itemsTable(spec, 230, out), out)
      break
    }
  }
  return { ...A4, font, items: out, ...(rules.length ? { rules } : {}) }
}

/** A till slip: a narrow page of monospace rows. */
export function receiptPage(spec: ReceiptSpec): PageModel {
  const items: Placed[] = []
  const pitch = (12 * spec.pitchRows) / spec.rows.length
  spec.rows.forEach(([left, right], i) => {
    const y = 24 + i * pitch
    if (left) items.push({ text: left, x: 10, y, size: 8.5 })
    if (right) items.push({ text: right, x: 215, y, size: 8.5, right: true })
  })
  return { width: 225, height: 40 + spec.pitchRows * 12, font: 'mono', items }
}
