import { COLUMNS, type TableText } from './line-items-table.ts'

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
