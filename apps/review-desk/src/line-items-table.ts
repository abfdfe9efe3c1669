import { isFieldValue, parseInput, shown } from './field-value.ts'

export const COLUMNS = ['description', 'quantity', 'unit_price', 'amount'] as const
type Column = (typeof COLUMNS)[number]

/** The table as typed text, row by row in COLUMNS order. */
export type TableText = string[][]

/** The line items as extraction provides them (rows of {description, quantity, unit_price, amount}), as text. */
export function tableText(rows: unknown): TableText {
  if (!Array.isArray(rows)) return []
  return rows.map((row) =>
    COLUMNS.map((c) => {
      const cell = (row as Record<string, unknown> | null)?.[c]
      return shown(isFieldValue(cell) ? cell.value : cell)
    }),
  )
}

/**
 * The typed table as the API takes it (`data.line_items`: rows of plain values, replacing the whole table): empty
 * rows dropped, numbers parsed; the first cell that does not parse is named instead.
 */
export function parseTable(
  table: TableText,
): { ok: true; rows: Record<Column, unknown>[] } | { ok: false; row: number; column: Column; why: string } {
  const rows: Record<Column, unknown>[] = []
  for (const [i, cells] of table.entries()) {
    if (cells.every((t) => t.trim() === '')) continue
    const row = {} as Record<Column, unknown>
    for (const [j, column] of COLUMNS.entries()) {
      const parsed = parseInput(column === 'description' ? 'text' : 'amount', cells[j] ?? '')
      if (!parsed.ok) return { ok: false, row: i, column, why: parsed.why }
      row[column] = parsed.value
    }
    rows.push(row)
  }
  return { ok: true, rows }
}
