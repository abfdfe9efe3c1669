// Every endpoint × missing scope × another workspace's ids. The operations come from the OpenAPI document each form
// serves (its `x-scopes`), so a new endpoint is covered without editing this file. For each form and each operation
// that takes a key: no key → 401; a key holding every scope but the operation's → 403 insufficient_scope; a full key
// of another workspace (same form, and the other form) naming this workspace's job, document, pipeline or webhook →
// 404, and lists never show them. Admin operations refuse no token and a workspace key (401).
import { invoicePdf } from '../tests/fixtures/make-fixtures.ts'
import { checkInvariants } from './lib/invariants.ts'
import { scenario } from './lib/report.ts'
import { type ChaosStack, startChaosStack } from './lib/stack.ts'
import { ALL_SCOPES, apiCall, newKey, newWorkspace, waitAllFinal, type Workspace } from './lib/workload.ts'

type Op = { method: string; path: string; scopes: string[] }
type Ids = { job: string; document: string; pipeline: string; webhook: string }

await scenario('authz: endpoint × missing scope × foreign ids', async (ctx) => {
  const stack = await startChaosStack('authz', { apps: ['api', 'stage-worker'] })
  ctx.stacks.push(stack)
  const pdf = await invoicePdf()
  const owners = { A: await newWorkspace(stack.baseUrl, 'A'), B: await newWorkspace(stack.baseUrl, 'B') }
  const others = { A: await newWorkspace(stack.baseUrl, 'A'), B: await newWorkspace(stack.baseUrl, 'B') }
  const ids = {
    A: await resources(stack, owners.A, pdf),
    B: await resources(stack, owners.B, pdf),
    otherA: await resources(stack, others.A, pdf),
    otherB: await resources(stack, others.B, pdf),
  }
  const problems: string[] = []
  let calls = 0
  const expect = (what: string, status: number, ok: boolean, body: string) => {
    calls++
    if (!ok) problems.push(`${what} → ${status} ${body.slice(0, 160)}`)
  }
  for (const form of ['A', 'B'] as const) {
    const doc = await apiCall(stack.baseUrl, 'GET', `/v1/openapi.json?form=${form}`, undefined)
    const ops = operations(doc.body)
    const attacker = others[form]
    const attackerIds = form === 'A' ? ids.otherA : ids.otherB
    const keyCache = new Map<string, string>()
    for (const op of ops) {
      const own = fill(op.path, attackerIds)
      const body = bodyFor(op, form, attackerIds.pipeline, pdf)
      // No key.
      const anon = await send(stack, op.method, own, undefined, body)
      expect(`${form} ${op.method} ${op.path} without a key`, anon.status, anon.status === 401, anon.text)
      // Every scope but the operation's.
      const lacking = ALL_SCOPES.filter((s) => !op.scopes.includes(s))
      const cacheKey = lacking.join(',')
      if (!keyCache.has(cacheKey)) keyCache.set(cacheKey, await newKey(stack.baseUrl, attacker.id, lacking))
      const scoped = await send(stack, op.method, own, keyCache.get(cacheKey), body)
      expect(
        `${form} ${op.method} ${op.path} without ${op.scopes.join('/')}`,
        scoped.status,
        scoped.status === 403 && scoped.text.includes('insufficient_scope'),
        scoped.text,
      )
      // Another workspace's ids, from a workspace of the same form and of the other form.
      for (const [label, victim] of [
        ['same form', form === 'A' ? ids.A : ids.B],
        ['other form', form === 'A' ? ids.B : ids.A],
      ] as const) {
        if (op.path.includes('{')) {
          const foreign = await send(stack, op.method, fill(op.path, victim), attacker.key, body)
          expect(
            `${form} ${op.method} ${fill(op.path, victim)} (${label} workspace's id)`,
            foreign.status,
            foreign.status === 404,
            foreign.text,
          )
        } else if (op.method === 'GET') {
          const q = `?pipeline_id=${victim.pipeline}&job_id=${victim.job}`
          for (const url of [op.path, `${op.path}${op.path === '/v1/openapi.json' ? '' : q}`]) {
            const list = await send(stack, 'GET', url, attacker.key, undefined)
            const leaked = Object.values(victim).filter((id) => list.text.includes(id))
            expect(
              `${form} GET ${url} (${label})`,
              list.status,
              list.status < 500 && leaked.length === 0,
              `leaks ${leaked.join(', ')}: ${list.text}`,
            )
          }
        } else if (op.path === '/v1/jobs' && form === 'A') {
          // A Form A submission naming another workspace's pipeline creates nothing.
          const res = await send(stack, 'POST', '/v1/jobs', attacker.key, bodyFor(op, form, victim.pipeline, pdf))
          expect(
            `A POST /v1/jobs with a ${label} pipeline_id`,
            res.status,
            res.status >= 400 && res.status < 500,
            res.text,
          )
        }
      }
    }
    // Admin operations: no token, and a workspace key in either header.
    for (const op of adminOperations(doc.body)) {
      const path = op.path.replace(/\{[^}]+\}/g, owners[form].id)
      for (const [label, headers] of [
        ['no token', {}],
        ['a workspace key as bearer', { Authorization: `Bearer ${owners[form].key}` }],
        ['a workspace key', { 'X-API-Key': owners[form].key }],
      ] as const) {
        const res = await fetch(stack.baseUrl + path, { method: op.method, headers })
        const text = await res.text()
        expect(`${op.method} ${op.path} with ${label}`, res.status, res.status === 401, text)
      }
    }
  }
  ctx.detail.push(`${calls} calls, ${problems.length} broken`)
  ctx.check(
    'every answer is 401 / 403 insufficient_scope / 404 as due',
    problems.length === 0,
    problems.length ? `${problems.length}: ${problems.slice(0, 8).join(' | ')}` : `${calls} calls`,
  )
  await waitAllFinal(stack, 120_000)
  await checkInvariants(ctx, stack)
})

/** Operations that take a workspace key, with the scopes they need (the served document's `x-scopes`). */
function operations(doc: any): Op[] {
  const out: Op[] = []
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!Array.isArray(op?.['x-scopes']) || path.startsWith('/admin')) continue
      out.push({ method: method.toUpperCase(), path, scopes: op['x-scopes'] })
    }
  }
  return out
}

function adminOperations(doc: any): Op[] {
  const out: Op[] = []
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    if (!path.startsWith('/admin')) continue
    for (const method of Object.keys(item)) {
      if (['get', 'post', 'patch', 'put', 'delete'].includes(method))
        out.push({ method: method.toUpperCase(), path, scopes: [] })
    }
  }
  return out
}

function fill(path: string, ids: Ids): string {
  const resource = path.startsWith('/v1/jobs')
    ? ids.job
    : path.startsWith('/v1/documents')
      ? ids.document
      : path.startsWith('/v1/pipelines')
        ? ids.pipeline
        : ids.webhook
  return path.replace(/\{n\}/g, '1').replace(/\{[^}]+\}/g, resource)
}

type Body = { json?: unknown; form?: () => FormData }

function bodyFor(op: Op, form: 'A' | 'B', pipelineId: string, pdf: Uint8Array): Body {
  const key = `${op.method} ${op.path}`
  if (key === 'POST /v1/jobs') {
    return {
      form: () => {
        const f = new FormData()
        if (form === 'A') f.append('pipeline_id', pipelineId)
        f.append(form === 'A' ? 'file' : 'files', new Blob([pdf as Uint8Array<ArrayBuffer>]), 'authz.pdf')
        return f
      },
    }
  }
  if (key === 'POST /v1/pipelines') return { json: { name: `authz-${Math.random()}`, definition: {} } }
  if (key === 'POST /v1/pipelines/{id}/versions') return { json: { definition: {} } }
  if (key === 'POST /v1/webhooks') {
    return {
      json: {
        name: `authz-${Math.random()}`,
        url: 'https://127.0.0.1:9/x',
        ...(form === 'A' ? { auth_type: 'NONE' } : {}),
      },
    }
  }
  if (key === 'PATCH /v1/webhooks/{id}') return { json: { status: 'active' } }
  if (key === 'POST /v1/documents/{id}/review') return { json: { action: 'approve' } }
  return {}
}

async function send(stack: ChaosStack, method: string, path: string, key: string | undefined, body: Body | undefined) {
  const headers: Record<string, string> = {}
  if (key) headers['X-API-Key'] = key
  let payload: BodyInit | undefined
  if (body?.json !== undefined) {
    headers['Content-Type'] = 'application/json'
    payload = JSON.stringify(body.json)
  } else if (body?.form) payload = body.form()
  const res = await fetch(stack.baseUrl + path, { method, headers, body: payload })
  return { status: res.status, text: await res.text() }
}

/** A published pipeline, a webhook, and a finished job with its document, in `ws`. */
async function resources(stack: ChaosStack, ws: Workspace, pdf: Uint8Array): Promise<Ids> {
  const pipe = await apiCall(stack.baseUrl, 'POST', '/v1/pipelines', ws.key, { name: 'authz', definition: {} })
  await apiCall(stack.baseUrl, 'POST', `/v1/pipelines/${pipe.body.id}/versions/1/publish`, ws.key)
  const hook = await apiCall(stack.baseUrl, 'POST', '/v1/webhooks', ws.key, {
    name: 'authz',
    url: 'https://127.0.0.1:9/x',
    ...(ws.form === 'B' ? { events: ['pipeline.deployed'] } : { auth_type: 'NONE' }),
  })
  const form = new FormData()
  if (ws.form === 'A') form.append('pipeline_id', pipe.body.id)
  form.append(ws.form === 'A' ? 'file' : 'files', new Blob([pdf as Uint8Array<ArrayBuffer>]), 'authz.pdf')
  const job = await fetch(`${stack.baseUrl}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': ws.key }, body: form })
  const jobBody = (await job.json()) as any
  const jobId = ws.form === 'A' ? jobBody.id : jobBody[0].job_id
  await waitAllFinal(stack, 120_000)
  const doc = await stack.query<{ id: string }>('SELECT id FROM documents WHERE job_id = $1 LIMIT 1', [jobId])
  if (!pipe.body?.id || !hook.body?.id || !doc[0]) {
    throw new Error(`could not create ${ws.form} resources: ${pipe.text} ${hook.text} ${JSON.stringify(jobBody)}`)
  }
  return { job: jobId, document: doc[0].id, pipeline: pipe.body.id, webhook: hook.body.id }
}
