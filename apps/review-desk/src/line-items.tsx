import { isFieldValue, shown } from './field-value.ts'

const COLUMNS = ['description', 'quantity', 'unit_price', 'amount'] as const

/** The invoice's line items, as extraction provides them: rows of {description, quantity, unit_price, amount}. */
export function LineItems(props: { rows: unknown[] }) {
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
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row, i) => (
          <tr key={i}>
            {COLUMNS.map((c) => {
              const cell = (row as Record<string, unknown> | null)?.[c]
              return <td key={c}>{shown(isFieldValue(cell) ? cell.value : cell)}</td>
            })}
          </tr>
        ))}
      </tbody>
    </table>
  )
}
