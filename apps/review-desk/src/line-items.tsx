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

/** The invoice's line items, each cell editable (amounts as numbers), with rows to add and remove. */
export function LineItems(props: { table: TableText; onChange: (table: TableText) => void }) {
  const set = (i: number, j: number, text: string) =>
    props.onChange(props.table.map((cells, r) => (r === i ? cells.map((t, c) => (c === j ? text : t)) : cells)))
  return (
    <table class="line-items">
      <caption>Line items</caption>
      <thead>
        <tr>
          {COLUMNS.map((c) => (
            <th scope="col" key={c}>
              {c.replace('_', ' ')}
            </th>
          ))}
          <th scope="col">
            <span class="visually-hidden">Row</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.table.map((cells, i) => (
          <tr key={i}>
            {COLUMNS.map((c, j) => (
              <td key={c}>
                <input
                  data-cell={`${i}.${c}`}
                  aria-label={`${c.replace('_', ' ')}, row ${i + 1}`}
                  inputMode={c === 'description' ? undefined : 'decimal'}
                  value={cells[j] ?? ''}
                  onInput={(e) => set(i, j, e.currentTarget.value)}
                />
              </td>
            ))}
            <td>
              <button
                type="button"
                aria-label={`Remove row ${i + 1}`}
                onClick={() => props.onChange(props.table.filter((_, r) => r !== i))}
              >
                ×
              </button>
            </td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <td colSpan={COLUMNS.length + 1}>
            <button type="button" onClick={() => props.onChange([...props.table, COLUMNS.map(() => '')])}>
              Add row
            </button>
          </td>
        </tr>
      </tfoot>
    </table>
  )
}
