// The load the scenarios drive: workspaces through the admin API, jobs submitted over HTTP the way a client does
// (retrying 503 and refused connections after Retry-After, as the API asks during an outage), and waiting until every
// job in the database is final.
import { randomBytes } from 'node:crypto'
import { INVOICE_LINES, textPdf } from '../../tests/fixtures/make-fixtures.ts'
import { multipartBody, sleep } from '../../bench/lib/kit.ts'
import { ADMIN_TOKEN, type ChaosStack } from './stack.ts'

export const ALL_SCOPES = [
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
export const FINAL_STATUSES = ['completed', 'completed_with_errors', 'failed', 'cancelled', 'timed_out']

export type Workspace = {
  id: string
  key: string
  form: 'A' | 'B' /** Form A: the pipeline jobs use. */
  pipelineId?: string
}

export async function adminCall(baseUrl: string, method: string, path: string, body?: unknown) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

export async function newWorkspace(
  baseUrl: string,
  form: 'A' | 'B',
  opts: { credits?: number; scopes?: string[] } = {},
): Promise<Workspace> {
  const ws = await adminCall(baseUrl, 'POST', '/admin/v1/workspaces', {
    name: `chaos-${form}-${randomBytes(4).toString('hex')}`,
    api_form: form,
    credits: opts.credits ?? 1_000_000,
  })
  if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`)
  return { id: ws.body.id, form, key: await newKey(baseUrl, ws.body.id, opts.scopes ?? ALL_SCOPES) }
}

export async function newKey(baseUrl: string, workspaceId: string, scopes: string[]): Promise<string> {
  const key = await adminCall(baseUrl, 'POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, { scopes })
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`)
  return key.body.key
}

/** Calls the API with a workspace key; JSON in, JSON (or text) out. */
export async function apiCall(
  baseUrl: string,
  method: string,
  path: string,
  key: string | undefined,
  json?: unknown,
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const headers: Record<string, string> = {}
  if (key) headers['X-API-Key'] = key
  if (json !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  const text = await res.text()
  let body: unknown = text
  try {
    body = text ? JSON.parse(text) : null
  } catch {}
  return { status: res.status, body, text, headers: res.headers }
}

/** Distinct one-page invoices (distinct bytes, so no two jobs share a blob). */
export async function invoices(n: number, pagesEvery = 0): Promise<Uint8Array[]> {
  const out: Uint8Array[] = []
  for (let i = 0; i < n; i++) {
    const pages = pagesEvery && i % pagesEvery === 0 ? 3 : 1
    out.push(
      await textPdf(
        Array.from({ length: pages }, (_, p) => [...INVOICE_LINES.slice(0, 3), `Invoice Number: CH-${i}-${p}`]),
      ),
    )
  }
  return out
}

export type SubmitStats = { jobIds: string[]; retried: number; serverErrors: string[] }

/**
 * Submits every file as one job, `inFlight` at a time. 503 and refused or reset connections are retried after
 * Retry-After (or 1 s); any other answer ≥ 500 is recorded and not retried.
 */
export async function submitJobs(
  stack: ChaosStack,
  ws: Workspace,
  files: Uint8Array[],
  opts: {
    inFlight?: number
    onSubmitted?: (n: number) => void
    fields?: Record<string, string>
    /** Pause between one submitter's requests, so the load spans the fault. */
    paceMs?: number
  } = {},
): Promise<SubmitStats> {
  const stats: SubmitStats = { jobIds: [], retried: 0, serverErrors: [] }
  let next = 0
  await Promise.all(
    Array.from({ length: opts.inFlight ?? 4 }, async () => {
      while (next < files.length) {
        const i = next++
        const fields = ws.form === 'A' ? { pipeline_id: ws.pipelineId ?? 'parse', ...opts.fields } : { ...opts.fields }
        const { body, contentType } = multipartBody(
          ws.form === 'A' ? 'file' : 'files',
          `doc-${i}.pdf`,
          files[i]!,
          fields,
        )
        for (let attempt = 0; ; attempt++) {
          let res: Response
          try {
            res = await fetch(`${stack.baseUrl}/v1/jobs`, {
              method: 'POST',
              headers: { 'X-API-Key': ws.key, 'Content-Type': contentType },
              body,
            })
          } catch {
            if (attempt > 120) throw new Error('the API stayed unreachable for 2 minutes')
            stats.retried++
            await sleep(1000)
            continue
          }
          const text = await res.text()
          if (res.status === 503 && attempt < 120) {
            stats.retried++
            await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000)
            continue
          }
          if (res.status >= 500) {
            stats.serverErrors.push(`POST /v1/jobs → ${res.status} ${text.slice(0, 200)}`)
            break
          }
          if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${text.slice(0, 300)}`)
          const parsed = JSON.parse(text)
          stats.jobIds.push(ws.form === 'A' ? parsed.id : parsed[0].job_id)
          opts.onSubmitted?.(stats.jobIds.length)
          if (opts.paceMs) await sleep(opts.paceMs)
          break
        }
      }
    }),
  )
  return stats
}

/** Waits until every job in the database is final; returns the statuses seen last. */
export async function waitAllFinal(stack: ChaosStack, timeoutMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = await stack.query<{ status: string; n: number }>(
      'SELECT status::text AS status, count(*)::int AS n FROM jobs GROUP BY status',
    )
    const statuses = Object.fromEntries(rows.map((r) => [r.status, r.n]))
    if (rows.every((r) => FINAL_STATUSES.includes(r.status)) || Date.now() > deadline) return statuses
    await sleep(500)
  }
}

const STAGES = ['initialization', 'parse', 'split_classify', 'extract', 'validate', 'post_processing', 'destination']

/**
 * A webhook to the stack's receiver at `/<label>`, with basic-auth credentials: Form B for every event; Form A bound
 * to the entry and exit of every stage of a new published pipeline, which becomes the workspace's pipeline. Returns
 * the signing secret and the password (values that must never be stored or logged in clear).
 */
export async function receiverWebhook(
  stack: ChaosStack,
  ws: Workspace,
  label: string,
): Promise<{ id: string; secret: string; password: string }> {
  if (!stack.receiver) throw new Error('the stack has no receiver')
  const url = `${stack.receiver.origin}/${label}`
  const password = `pw-${randomBytes(12).toString('base64url')}`
  const hook = await apiCall(
    stack.baseUrl,
    'POST',
    '/v1/webhooks',
    ws.key,
    ws.form === 'A'
      ? { name: label, url, auth_type: 'BASIC', auth: { username: 'chaos', password } }
      : { name: label, url, auth: 'basic', basic: { username: 'chaos', password } },
  )
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${hook.text}`)
  if (ws.form === 'B') return { id: hook.body.id, secret: hook.body.secret, password }
  const bindings = Object.fromEntries(
    STAGES.map((s) => [s, { entry_webhook_id: hook.body.id, exit_webhook_id: hook.body.id }]),
  )
  const pipe = await apiCall(stack.baseUrl, 'POST', '/v1/pipelines', ws.key, {
    name: `p-${label}`,
    definition: { bindings },
  })
  if (pipe.status !== 201) throw new Error(`pipeline: ${pipe.status} ${pipe.text}`)
  const pub = await apiCall(stack.baseUrl, 'POST', `/v1/pipelines/${pipe.body.id}/versions/1/publish`, ws.key)
  if (pub.status !== 200) throw new Error(`publish: ${pub.status} ${pub.text}`)
  ws.pipelineId = pipe.body.id
  return { id: hook.body.id, secret: hook.body.hmac_secret, password }
}
