import { useEffect, useRef } from 'preact/hooks'
import type { QueueItem } from './api-client.ts'
import { type Filters, isTyping } from './app.tsx'

/** "3 h", "2 d": how long a document has waited. */
export function age(since: string, now = Date.now()): string {
  const s = Math.max(0, (now - Date.parse(since)) / 1000)
  if (s < 60) return `${Math.floor(s)} s`
  if (s < 3600) return `${Math.floor(s / 60)} min`
  if (s < 86400) return `${Math.floor(s / 3600)} h`
  return `${Math.floor(s / 86400)} d`
}

/** The field names a document's problems name (`amount: confidence 0.4 below 0.9` → amount). */
export const parkedFields = (problems: string[]) => [...new Set(problems.map((p) => p.split(':')[0]!.trim()))]

/** The queue: parked documents, oldest first, with filters and the count; j/k move, Enter opens. */
export function QueueView(props: {
  items: QueueItem[]
  hasMore: boolean
  filters: Filters
  onFilters: (f: Filters) => void
  selected: number
  onSelect: (i: number) => void
  onOpen: (id: string) => void
  helpOpen: boolean
}) {
  const { items, selected } = props
  // Filter choices remember every pipeline and schema seen, so narrowing the list does not empty the menus.
  const seen = useRef({ pipelines: new Set<string>(), schemas: new Set<string>() })
  for (const d of items) {
    seen.current.pipelines.add(d.pipeline_id)
    if (d.schema_id) seen.current.schemas.add(d.schema_id)
  }
  const rows = useRef<HTMLTableSectionElement>(null)
  // The key handler reads the latest selection (keys can come faster than renders).
  const at = useRef(selected)
  at.current = selected

  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if (props.helpOpen || isTyping(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) return
      const i = at.current
      if (ev.key === 'j' || ev.key === 'ArrowDown') at.current = Math.min(i + 1, items.length - 1)
      else if (ev.key === 'k' || ev.key === 'ArrowUp') at.current = Math.max(i - 1, 0)
      else if (ev.key === 'Enter' && items[i]) props.onOpen(items[i].id)
      else return
      if (at.current !== i) props.onSelect(at.current)
      ev.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [items, props.helpOpen])

  useEffect(() => {
    rows.current?.querySelector<HTMLElement>('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' })
  }, [selected])

  const count = `${items.length}${props.hasMore ? '+' : ''} document${items.length === 1 ? '' : 's'} waiting`
  return (
    <main class="queue">
      <h2>
        Queue <span class="count">{count}</span>
      </h2>
      <fieldset class="filters">
        <legend>Filters</legend>
        <label>
          Pipeline
          <select
            value={props.filters.pipelineId ?? ''}
            onChange={(e) => props.onFilters({ ...props.filters, pipelineId: e.currentTarget.value || undefined })}
          >
            <option value="">All pipelines</option>
            {[...seen.current.pipelines].map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Schema
          <select
            value={props.filters.schemaId ?? ''}
            onChange={(e) => props.onFilters({ ...props.filters, schemaId: e.currentTarget.value || undefined })}
          >
            <option value="">All schemas</option>
            {[...seen.current.schemas].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </fieldset>
      {items.length === 0 ? (
        <p class="notice">Nothing waits for review.</p>
      ) : (
        <table class="queue-table" aria-label="Documents waiting for review, oldest first">
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Status</th>
              <th scope="col">Job</th>
              <th scope="col">Pipeline</th>
              <th scope="col">Schema</th>
              <th scope="col">Waiting</th>
              <th scope="col">Parked by</th>
            </tr>
          </thead>
          <tbody ref={rows}>
            {items.map((d, i) => (
              <tr
                key={d.id}
                aria-selected={i === selected ? 'true' : 'false'}
                class={i === selected ? 'selected' : undefined}
                onClick={() => props.onOpen(d.id)}
              >
                <td>
                  <button type="button" class="link" onClick={() => props.onOpen(d.id)}>
                    {d.id}
                  </button>
                </td>
                <td>{d.status}</td>
                <td>{d.job_id}</td>
                <td>{d.pipeline_id}</td>
                <td>{d.schema_id ?? ''}</td>
                <td>{age(d.created_at)}</td>
                <td>{parkedFields(d.review_problems).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  )
}
