import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiError, type Client, createClient, type QueueItem } from './api-client.ts'
import { DocumentView } from './document-view.tsx'
import { HelpDialog } from './help-dialog.tsx'
import { QueueView } from './queue-view.tsx'
import { session } from './session.ts'
import { SignIn } from './sign-in.tsx'

export type Filters = { pipelineId?: string; schemaId?: string }

/** The desk: sign-in, then the queue of parked documents and one document at a time. */
export function App() {
  const [client, setClient] = useState<Client | null>(() => {
    const key = session.key()
    return key ? createClient(key) : null
  })
  const [items, setItems] = useState<QueueItem[]>([])
  const [hasMore, setHasMore] = useState(false)
  const [filters, setFilters] = useState<Filters>({})
  const [selected, setSelected] = useState(0)
  const [openId, setOpenId] = useState<string | null>(null)
  const [help, setHelp] = useState(false)
  const [error, setError] = useState<string | null>(null)

  const signOut = useCallback(() => {
    session.forget()
    setClient(null)
    setOpenId(null)
  }, [])

  const load = useCallback(async () => {
    if (!client) return [] as QueueItem[]
    try {
      const page = await client.queue(filters)
      setItems(page.data)
      setHasMore(page.page.has_more)
      setError(null)
      return page.data
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) signOut()
      setError(e instanceof Error ? e.message : String(e))
      return [] as QueueItem[]
    }
  }, [client, filters, signOut])

  useEffect(() => {
    void load()
  }, [load])

  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if (ev.key === '?' && !isTyping(ev)) {
        ev.preventDefault()
        setHelp((h) => !h)
      } else if (ev.key === 'Escape' && help) setHelp(false)
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [help])

  if (!client) {
    return (
      <SignIn
        onSignedIn={(key) => {
          session.keep(key)
          setClient(createClient(key))
        }}
      />
    )
  }

  /** After a decision (or a move): the document `step` places after the current one, or the queue when none. */
  const move = async (step: 1 | -1, reload: boolean) => {
    const list = reload ? await load() : items
    const at = openId ? items.findIndex((d) => d.id === openId) : selected
    const rest = reload ? list.filter((d) => d.id !== openId) : list
    const nextIndex = reload ? Math.min(Math.max(at, 0), rest.length - 1) : at + step
    const next = rest[nextIndex]
    if (next && nextIndex >= 0) {
      setSelected(nextIndex)
      setOpenId(next.id)
    } else if (!reload) {
      // At either end of the queue: stay on this document.
    } else {
      setOpenId(null)
      setSelected(0)
    }
  }

  return (
    <div class="desk">
      <header class="bar">
        <h1>Quire review desk</h1>
        <span class="bar-hint">
          Press <kbd>?</kbd> for keys
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      {openId ? (
        <DocumentView
          key={openId}
          client={client}
          id={openId}
          item={items.find((d) => d.id === openId)}
          position={{ at: items.findIndex((d) => d.id === openId) + 1, of: items.length }}
          onBack={() => {
            setOpenId(null)
            void load()
          }}
          onMove={(step) => void move(step, false)}
          onDecided={() => void move(1, true)}
          helpOpen={help}
        />
      ) : (
        <QueueView
          items={items}
          hasMore={hasMore}
          filters={filters}
          onFilters={setFilters}
          selected={selected}
          onSelect={setSelected}
          onOpen={(id) => setOpenId(id)}
          helpOpen={help}
        />
      )}
      {help && <HelpDialog onClose={() => setHelp(false)} />}
    </div>
  )
}

/** Keys typed into a field are text, not commands. */
export const isTyping = (ev: KeyboardEvent): boolean => {
  const t = ev.target as HTMLElement | null
  return !!t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')
}
