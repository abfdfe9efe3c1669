/** What the desk reads of the Quire API, with the key it was signed in with (sent as X-API-Key, never in a URL). */

export type FieldValue = { value: unknown; confidence: number; page?: number; bbox?: [number, number, number, number] }
export type QueueItem = {
  id: string
  status: string
  job_id: string
  pipeline_id: string
  schema_id: string | null
  pages: number[]
  review_problems: string[]
  created_at: string
}
export type DeskDocument = {
  id: string
  status: string
  job_id: string
  schema_id: string | null
  pages: number[]
  data: Record<string, unknown>
  updated_at: string
}
export type Workspace = { id: string; name: string; api_form: string }

/** An API refusal as the API worded it (both forms' envelopes). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

async function refusal(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => ({}))) as { error?: unknown; message?: unknown }
  const e = body.error
  if (e && typeof e === 'object') {
    const o = e as { code?: string; message?: string }
    return new ApiError(res.status, o.code ?? String(res.status), o.message ?? res.statusText)
  }
  return new ApiError(
    res.status,
    typeof e === 'string' ? e : String(res.status),
    String(body.message ?? res.statusText),
  )
}

export function createClient(key: string) {
  const headers = { 'X-API-Key': key }
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(path, { headers })
    if (!res.ok) throw await refusal(res)
    return (await res.json()) as T
  }
  return {
    queue(filters: { pipelineId?: string; schemaId?: string; cursor?: string }) {
      const q = new URLSearchParams({ status: 'in_review,escalated', limit: '100' })
      if (filters.pipelineId) q.set('pipeline_id', filters.pipelineId)
      if (filters.schemaId) q.set('schema_id', filters.schemaId)
      if (filters.cursor) q.set('cursor', filters.cursor)
      return get<{ data: QueueItem[]; page: { next_cursor: string | null; has_more: boolean } }>(`/v1/documents?${q}`)
    },
    document: (id: string) => get<DeskDocument>(`/v1/documents/${encodeURIComponent(id)}`),
    async page(id: string, n: number): Promise<Blob> {
      const res = await fetch(`/v1/documents/${encodeURIComponent(id)}/pages/${n}`, { headers })
      if (!res.ok) throw await refusal(res)
      return res.blob()
    },
    async decide(id: string, action: 'approve' | 'reject' | 'escalate', data?: Record<string, unknown>) {
      const res = await fetch(`/v1/documents/${encodeURIComponent(id)}/review`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify(data && Object.keys(data).length ? { action, data } : { action }),
      })
      if (!res.ok) throw await refusal(res)
      return (await res.json()) as DeskDocument
    },
    /**
     * Checks the key holds documents:review without deciding anything: a review of a document that cannot exist is
     * refused for the scope (403) before it is looked up (404).
     */
    async canReview(): Promise<void> {
      const res = await fetch('/v1/documents/doc_desk_scope_check/review', {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ action: 'escalate' }),
      })
      if (res.status !== 404) throw await refusal(res)
    },
  }
}
export type Client = ReturnType<typeof createClient>

/** The operator's path: with the admin token, pick a workspace by its id and issue a desk key for it. */
export function createAdminClient(token: string) {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }
  return {
    async workspace(id: string): Promise<Workspace> {
      const res = await fetch(`/admin/v1/workspaces/${encodeURIComponent(id)}`, { headers })
      if (!res.ok) throw await refusal(res)
      return (await res.json()) as Workspace
    },
    async deskKey(workspaceId: string): Promise<string> {
      const res = await fetch(`/admin/v1/workspaces/${encodeURIComponent(workspaceId)}/api-keys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ scopes: ['documents:read', 'documents:review'] }),
      })
      if (!res.ok) throw await refusal(res)
      return ((await res.json()) as { key: string }).key
    },
  }
}
