// A small HTTP client written from the spec and DESIGN.md, the way an integrator would.
import { assertContract } from './contract.ts'
import { ADMIN_TOKEN } from './stack.ts'

export type Res = { status: number; body: any; headers: Headers }

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; json?: unknown; form?: FormData; admin?: boolean } = {},
): Promise<Res> {
  const headers: Record<string, string> = {}
  if (opts.key) headers['X-API-Key'] = opts.key
  if (opts.admin) headers.Authorization = `Bearer ${ADMIN_TOKEN}`
  let body: BodyInit | undefined
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json'
    body = JSON.stringify(opts.json)
  } else if (opts.form) {
    body = opts.form
  }
  const res = await fetch(baseUrl + path, { method, headers, body })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {}
  await assertContract(
    baseUrl,
    { method, path, key: opts.key },
    { status: res.status, body: parsed, contentType: res.headers.get('content-type') },
  )
  return { status: res.status, body: parsed, headers: res.headers }
}

/** Creates a workspace of the given form through the admin API, with one key holding `scopes`. */
export async function newWorkspace(
  baseUrl: string,
  form: 'A' | 'B',
  opts: { credits?: number; scopes?: string[]; spendingCap?: number } = {},
) {
  const ws = await call(baseUrl, 'POST', '/admin/v1/workspaces', {
    admin: true,
    json: {
      name: `bb-${form}-${Math.random().toString(36).slice(2)}`,
      api_form: form,
      credits: opts.credits ?? 1000,
      spending_cap: opts.spendingCap,
    },
  })
  if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`)
  const scopes = opts.scopes ?? [
    'jobs:write',
    'jobs:read',
    'jobs:cancel',
    'webhook:write',
    'webhooks:write',
    'webhooks:read',
    'pipelines:read',
    'pipelines:write',
    'documents:read',
    'documents:review',
    'credits:read',
  ]
  const key = await call(baseUrl, 'POST', `/admin/v1/workspaces/${ws.body.id}/api-keys`, {
    admin: true,
    json: { scopes },
  })
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`)
  return { workspaceId: ws.body.id as string, key: key.body.key as string }
}

export function fileForm(
  field: string,
  files: { name: string; bytes: Uint8Array; type?: string }[],
  fields: Record<string, string> = {},
): FormData {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  for (const f of files)
    form.append(
      field,
      new Blob([f.bytes as Uint8Array<ArrayBuffer>], { type: f.type ?? 'application/octet-stream' }),
      f.name,
    )
  return form
}

export async function pollUntil<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: T = await fn()
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(last)}`)
    await new Promise((r) => setTimeout(r, intervalMs))
    last = await fn()
  }
  return last
}

/** Creates a pipeline with `definition` and publishes its version 1, as a client would; answers its id. */
export async function publishPipeline(baseUrl: string, key: string, name: string, definition: object = {}) {
  const created = await call(baseUrl, 'POST', '/v1/pipelines', { key, json: { name, definition } })
  if (created.status !== 201)
    throw new Error(`creating pipeline ${name}: ${created.status} ${JSON.stringify(created.body)}`)
  const id = created.body.id as string
  const published = await call(baseUrl, 'POST', `/v1/pipelines/${id}/versions/1/publish`, { key })
  if (published.status !== 200)
    throw new Error(`publishing ${id}: ${published.status} ${JSON.stringify(published.body)}`)
  return id
}
