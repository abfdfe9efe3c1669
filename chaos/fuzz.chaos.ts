// ≥ 10,000 generated requests (2,000 with --quick), written byte for byte to raw sockets: multipart with odd
// boundaries, part and transfer encodings, header sizes, field counts and non-UTF-8 names; JSON with NUL and deep
// nesting; odd paths, queries and headers (chaos/lib/fuzz-requests.ts). Invariants: no answer ≥ 500, every complete
// request answered, no process exits, nothing left in the upload or temporary directories, and the usual ones for
// the jobs the valid submissions among them created. Every failing request is written to
// chaos/results/fuzz-failures/ as the raw bytes sent (replay: `nc 127.0.0.1 <port> < file`, with the run's key).
// CHAOS_FUZZ_SEED replays a run's sequence.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { ROOT } from '../bench/lib/kit.ts'
import { rawRequest } from '../tests/blackbox/raw-http.ts'
import { INVOICE_LINES, textPdf } from '../tests/fixtures/make-fixtures.ts'
import { type FuzzRequest, requestArb } from './lib/fuzz-requests.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { ADMIN_TOKEN, startChaosStack } from './lib/stack.ts'
import { apiCall, newWorkspace, waitAllFinal } from './lib/workload.ts'

const COUNT = QUICK ? 2000 : 10_000
const BATCH = 250
const CONCURRENCY = 6
const seed = Number(process.env.CHAOS_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
const failuresDir = path.join(ROOT, 'chaos', 'results', 'fuzz-failures')

await scenario('fuzz: generated bad requests', async (ctx) => {
  const stack = await startChaosStack('fuzz')
  ctx.stacks.push(stack)
  const a = await newWorkspace(stack.baseUrl, 'A', { credits: 1_000_000_000 })
  const b = await newWorkspace(stack.baseUrl, 'B', { credits: 1_000_000_000 })
  const pdf = Buffer.from(await textPdf([INVOICE_LINES.slice(0, 4)]))
  // Real ids, so some generated paths reach real rows: a pipeline, a webhook, a job and its document.
  const pipe = await apiCall(stack.baseUrl, 'POST', '/v1/pipelines', b.key, { name: 'fuzz', definition: {} })
  const hook = await apiCall(stack.baseUrl, 'POST', '/v1/webhooks', b.key, {
    name: 'fuzz',
    url: 'https://127.0.0.1:9/hook',
    events: ['pipeline.deployed'],
  })
  const form = new FormData()
  form.append('files', new Blob([pdf]), 'seed.pdf')
  const job = await fetch(`${stack.baseUrl}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': b.key }, body: form })
  const jobId = ((await job.json()) as { job_id: string }[])[0]!.job_id
  await waitAllFinal(stack, 120_000)
  const doc = await stack.query<{ id: string }>('SELECT id FROM documents WHERE job_id = $1 LIMIT 1', [jobId])
  const ids = [jobId, pipe.body?.id, hook.body?.id, doc[0]?.id].filter((x): x is string => typeof x === 'string')

  const arb = requestArb({ keyA: a.key, keyB: b.key, adminToken: ADMIN_TOKEN, pdf, ids })
  const statuses = new Map<number, number>()
  const failures: { index: number; req: FuzzRequest; status: number; body: string; why: string }[] = []
  let unanswered = 0
  let sent = 0
  const t0 = performance.now()
  for (let batch = 0; batch * BATCH < COUNT; batch++) {
    const requests = fc.sample(arb, { numRuns: Math.min(BATCH, COUNT - batch * BATCH), seed: seed + batch })
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          const index = batch * BATCH + next
          const req = requests[next++]!
          let status = 0
          let body = ''
          try {
            const res = await rawRequest({
              port: stack.apiPort,
              head: req.head,
              body: req.body,
              closeAfterBody: req.truncated ? 'end' : undefined,
              timeoutMs: 20_000,
            })
            status = res.status
            body = res.body.slice(0, 500)
          } catch (e) {
            body = e instanceof Error ? e.message : String(e)
          }
          sent++
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
          if (status >= 500) failures.push({ index, req, status, body, why: `answered ${status}` })
          else if (status === 0 && !req.truncated) {
            unanswered++
            failures.push({ index, req, status, body, why: 'no answer to a complete request' })
          }
        }
      }),
    )
    if (!stack.running('api')) break
  }
  const seconds = (performance.now() - t0) / 1000
  const histogram = [...statuses.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([s, n]) => `${s || 'none'}×${n}`)
    .join(' ')
  ctx.detail.push(`${sent} requests in ${Math.round(seconds)} s, seed ${seed}; ${histogram}`)
  ctx.check('enough requests sent', sent >= COUNT, `${sent} of ${COUNT}`)
  const fiveHundreds = failures.filter((f) => f.status >= 500)
  ctx.check('0 responses ≥ 500', fiveHundreds.length === 0, fiveHundreds.length ? summarise(fiveHundreds) : undefined)
  ctx.check(
    'every complete request answered',
    unanswered === 0,
    unanswered ? summarise(failures.filter((f) => f.status === 0)) : undefined,
  )
  const health = await fetch(`${stack.baseUrl}/healthz`).then(
    (r) => r.status,
    () => 0,
  )
  ctx.check('the API still answers /healthz', health === 200, `status ${health}`)
  const undeclared = stack
    .logText()
    .split('\n')
    .filter((l) => l.includes('response not declared by its route'))
  ctx.check(
    'every answer declared by its route',
    undeclared.length === 0,
    undeclared.length ? `${undeclared.length} logged, e.g. ${undeclared[0]?.slice(0, 300)}` : undefined,
  )
  const accepted = (statuses.get(202) ?? 0) + (statuses.get(200) ?? 0)
  ctx.check('some generated submissions were valid jobs', (statuses.get(202) ?? 0) > 0, `${accepted} answered 2xx`)
  if (failures.length) writeFailures(failures, stack.apiPort)
  await checkInvariants(ctx, stack, { finalWithinMs: 300_000 })
})

/** Failures grouped by request kind, method and first path segments, with the first example of each group. */
function summarise(list: { index: number; req: FuzzRequest; why: string; body: string }[]): string {
  const groups = new Map<string, { n: number; first: (typeof list)[number] }>()
  for (const f of list) {
    const [method, target] = (f.req.head[0] ?? '').split(' ')
    const where = (target ?? '').split('?')[0]!.split('/').slice(0, 3).join('/').slice(0, 40)
    const key = `${f.req.kind} ${method} ${where}`
    const g = groups.get(key)
    if (g) g.n++
    else groups.set(key, { n: 1, first: f })
  }
  return `${list.length}: ${[...groups]
    .map(([k, g]) => `${k} ×${g.n} (#${g.first.index} ${g.first.why}: ${g.first.body.slice(0, 90)})`)
    .join(' | ')}; raw requests in chaos/results/fuzz-failures/`
}

function writeFailures(
  list: { index: number; req: FuzzRequest; status: number; body: string; why: string }[],
  port: number,
) {
  rmSync(failuresDir, { recursive: true, force: true })
  mkdirSync(failuresDir, { recursive: true })
  const index = list.slice(0, 50).map((f) => {
    const file = `${String(f.index).padStart(5, '0')}-${f.req.kind}.http`
    writeFileSync(
      path.join(failuresDir, file),
      Buffer.concat([Buffer.from(`${f.req.head.join('\r\n')}\r\n\r\n`, 'latin1'), f.req.body]),
    )
    return { file, why: f.why, status: f.status, response: f.body, request_line: f.req.head[0] }
  })
  writeFileSync(path.join(failuresDir, 'index.json'), `${JSON.stringify({ seed, port, failures: index }, null, 2)}\n`)
}
