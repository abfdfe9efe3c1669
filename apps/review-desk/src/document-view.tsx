import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, type Client, type DeskDocument, type FieldValue, type QueueItem } from './api-client.ts'
import { isTyping } from './app.tsx'
import { confidenceBand, fieldKind, isFieldValue, parseInput, shown } from './field-value.ts'
import { LineItems } from './line-items.tsx'
import { parseTable, type TableText, tableText } from './line-items-table.ts'
import { type PageBox, PageImage } from './page-image.tsx'
import { parkedFields } from './queue-view.tsx'

type Action = 'approve' | 'reject' | 'escalate'

/**
 * One parked document: its pages with a box per field, its fields edited inline by type, and the decision. Typing is
 * kept in `edits` until a decision is accepted, so a refusal (decided elsewhere meanwhile) loses nothing.
 */
export function DocumentView(props: {
  client: Client
  id: string
  item: QueueItem | undefined
  position: { at: number; of: number }
  onBack: () => void
  onMove: (step: 1 | -1) => void
  onDecided: () => void
  helpOpen: boolean
}) {
  const [doc, setDoc] = useState<DeskDocument | null>(null)
  const [edits, setEditsState] = useState<Record<string, string>>({})
  const [selected, setSelectedState] = useState<string | null>(null)
  // Keys can come faster than renders: the key handler reads the latest selection and typing from these refs, which
  // change with the state at once, never from a render's closure.
  const editsRef = useRef(edits)
  const selectedRef = useRef(selected)
  const setEdits = (next: (all: Record<string, string>) => Record<string, string>) => {
    editsRef.current = next(editsRef.current)
    setEditsState(editsRef.current)
  }
  const setSelected = (name: string | null) => {
    selectedRef.current = name
    setSelectedState(name)
  }
  // The line items as typed: null until the reviewer changes the table (then it replaces the whole table).
  const [table, setTableState] = useState<TableText | null>(null)
  const tableRef = useRef(table)
  const setTable = (next: TableText | null) => {
    tableRef.current = next
    setTableState(next)
  }
  const [message, setMessage] = useState<{ kind: 'error' | 'info'; text: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const inputs = useRef<Record<string, HTMLInputElement | null>>({})
  const heading = useRef<HTMLHeadingElement>(null)

  useEffect(() => {
    props.client
      .document(props.id)
      .then((d) => {
        setDoc(d)
        heading.current?.focus()
      })
      .catch((e: Error) => setMessage({ kind: 'error', text: e.message }))
  }, [props.id])

  const fields = doc ? Object.entries(doc.data).filter((e): e is [string, FieldValue] => isFieldValue(e[1])) : []
  const names = fields.map(([n]) => n)
  const parked = new Set(parkedFields(props.item?.review_problems ?? []))

  const decide = async (action: Action) => {
    if (!doc || busy) return
    const data: Record<string, unknown> = {}
    for (const [name, field] of fields) {
      const text = editsRef.current[name]
      if (text === undefined || text === shown(field.value)) continue
      const parsed = parseInput(fieldKind(name, field), text)
      if (!parsed.ok) {
        setSelected(name)
        inputs.current[name]?.focus()
        setMessage({ kind: 'error', text: `${name}: ${parsed.why}` })
        return
      }
      data[name] = parsed.value
    }
    const typedTable = tableRef.current
    if (typedTable && JSON.stringify(typedTable) !== JSON.stringify(tableText(doc.data.line_items))) {
      const parsed = parseTable(typedTable)
      if (!parsed.ok) {
        document.querySelector<HTMLInputElement>(`input[data-cell="${parsed.row}.${parsed.column}"]`)?.focus()
        setMessage({ kind: 'error', text: `line items, row ${parsed.row + 1}, ${parsed.column}: ${parsed.why}` })
        return
      }
      data.line_items = parsed.rows
    }
    setBusy(true)
    try {
      await props.client.decide(doc.id, action, action === 'escalate' ? undefined : data)
      props.onDecided()
    } catch (e) {
      if (e instanceof ApiError && e.code === 'DOCUMENT_NOT_IN_REVIEW') {
        setMessage({
          kind: 'error',
          text: `This document was decided elsewhere meanwhile (${e.message}). Nothing was sent; your typing is still here. Press u for the queue.`,
        })
      } else setMessage({ kind: 'error', text: e instanceof ApiError ? `${e.code}: ${e.message}` : String(e) })
    } finally {
      setBusy(false)
    }
  }

  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if (props.helpOpen || ev.ctrlKey || ev.metaKey || ev.altKey) return
      if (isTyping(ev)) {
        const name = (ev.target as HTMLElement).dataset.field
        if (!name) return
        if (ev.key === 'Enter') (ev.target as HTMLInputElement).blur()
        else if (ev.key === 'Escape') {
          setEdits(({ [name]: _, ...rest }) => rest)
          ;(ev.target as HTMLInputElement).blur()
        } else return
        ev.preventDefault()
        return
      }
      // Enter on a button presses it (add a row, remove one), not the field shortcut.
      if (ev.key === 'Enter' && (ev.target as HTMLElement | null)?.tagName === 'BUTTON') return
      const current = selectedRef.current
      const at = current ? names.indexOf(current) : -1
      if (ev.key === 'j') props.onMove(1)
      else if (ev.key === 'k') props.onMove(-1)
      else if (ev.key === 'f') setSelected(names[(at + 1) % names.length] ?? null)
      else if (ev.key === 'F') setSelected(names[(at - 1 + names.length) % names.length] ?? null)
      else if (ev.key === 'Enter' && current) {
        inputs.current[current]?.focus()
        inputs.current[current]?.select()
      } else if (ev.key === 'a') void decide('approve')
      else if (ev.key === 'r') void decide('reject')
      else if (ev.key === 'e') void decide('escalate')
      else if (ev.key === 'u') props.onBack()
      else return
      ev.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })

  useEffect(() => {
    if (selected)
      document.querySelector(`.box[data-field="${CSS.escape(selected)}"]`)?.scrollIntoView({ block: 'nearest' })
  }, [selected])

  if (!doc) return <main class="document">{message ? <p role="alert">{message.text}</p> : <p>Loading…</p>}</main>

  const pageIndex = (page: number) => {
    const i = doc.pages.indexOf(page)
    return i >= 0 ? i : page - 1
  }
  const boxesOn = (i: number): PageBox[] =>
    fields
      .filter(([, f]) => f.bbox && f.page !== undefined && pageIndex(f.page) === i)
      .map(([field, f]) => ({ field, bbox: f.bbox!, confidence: f.confidence }))

  return (
    <main class="document">
      <div class="doc-head">
        <h2 ref={heading} tabIndex={-1}>
          {doc.id} <span class="count">({doc.status})</span>
        </h2>
        <p class="doc-meta">
          Job {doc.job_id} · schema {doc.schema_id ?? 'none'} · document {props.position.at} of {props.position.of}
        </p>
        <div class="actions">
          <button type="button" onClick={() => props.onBack()}>
            Queue <kbd>u</kbd>
          </button>
          <button type="button" class="approve" disabled={busy} onClick={() => void decide('approve')}>
            Approve <kbd>a</kbd>
          </button>
          <button type="button" class="reject" disabled={busy} onClick={() => void decide('reject')}>
            Reject with corrections <kbd>r</kbd>
          </button>
          <button type="button" disabled={busy} onClick={() => void decide('escalate')}>
            Escalate <kbd>e</kbd>
          </button>
        </div>
      </div>
      {message && (
        <p class={`notice ${message.kind}`} role="alert">
          {message.text}
        </p>
      )}
      <div class="doc-body">
        <section class="pages" aria-label="Pages">
          {doc.pages.map((_, i) => (
            <PageImage
              key={i}
              client={props.client}
              documentId={doc.id}
              n={i + 1}
              boxes={boxesOn(i)}
              selected={selected}
              onSelect={(f) => setSelected(f)}
            />
          ))}
        </section>
        <section class="fields" aria-label="Fields">
          <h3>Fields</h3>
          <ul>
            {fields.map(([name, f]) => {
              const kind = fieldKind(name, f)
              const id = `field-${name}`
              return (
                <li
                  key={name}
                  class={`field-row${selected === name ? ' selected' : ''}${parked.has(name) ? ' parked' : ''}`}
                >
                  <label for={id}>
                    {name}
                    {parked.has(name) && <span class="parked-tag"> (parked)</span>}
                  </label>
                  <input
                    id={id}
                    data-field={name}
                    ref={(el) => {
                      inputs.current[name] = el
                    }}
                    type={kind === 'date' ? 'date' : 'text'}
                    inputMode={kind === 'amount' ? 'decimal' : undefined}
                    maxLength={kind === 'currency' ? 3 : undefined}
                    class={kind === 'currency' ? 'code' : undefined}
                    value={edits[name] ?? shown(f.value)}
                    onFocus={() => setSelected(name)}
                    onInput={(e) => {
                      const v = e.currentTarget.value
                      setEdits((all) => ({ ...all, [name]: v }))
                    }}
                  />
                  <span class={`confidence band-${confidenceBand(f.confidence)}`}>
                    {Math.round(f.confidence * 100)}%
                  </span>
                </li>
              )
            })}
          </ul>
          {Array.isArray(doc.data.line_items) && (
            <LineItems table={table ?? tableText(doc.data.line_items)} onChange={setTable} />
          )}
        </section>
      </div>
    </main>
  )
}
