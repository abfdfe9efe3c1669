// PostgreSQL stopped for 30 s (10 s with --quick) mid-load: `pg_ctl stop -m fast` on the run's own cluster (every
// connection closed, new ones refused), then started again. While it is away /healthz stays 200, /readyz and the API
// answer 503 with Retry-After (never another 5xx); when it returns, work resumes by itself (no app is restarted),
// every job completes once, every event is delivered once.
import { sleep } from '../bench/lib/kit.ts'
import { checkDeliveries } from './lib/deliveries.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { startChaosStack } from './lib/stack.ts'
import { apiCall, invoices, newWorkspace, receiverWebhook, submitJobs, waitAllFinal } from './lib/workload.ts'

const JOBS = QUICK ? 24 : 100
const OUTAGE_MS = QUICK ? 10_000 : 30_000

await scenario('PostgreSQL stopped mid-load', async (ctx) => {
  const stack = await startChaosStack('pg-outage', { receiver: {} })
  ctx.stacks.push(stack)
  const a = await newWorkspace(stack.baseUrl, 'A')
  const b = await newWorkspace(stack.baseUrl, 'B')
  const hooks = [await receiverWebhook(stack, a, 'a-hook'), await receiverWebhook(stack, b, 'b-hook')]
  const files = await invoices(JOBS, 5)
  let restartedAt = 0
  const during: string[] = []
  let submittedCount = 0
  const fault = (async () => {
    // Mid-load: a third of the jobs submitted (some already final, some running), the rest still to come.
    while (submittedCount < JOBS / 3) await sleep(100)
    await stack.pg.stop()
    const stoppedAt = Date.now()
    await sleep(1500)
    const health = await fetch(`${stack.baseUrl}/healthz`)
    const ready = await fetch(`${stack.baseUrl}/readyz`)
    const readyBody = await ready.text()
    const job = await apiCall(stack.baseUrl, 'GET', '/v1/jobs?limit=5', b.key)
    during.push(`healthz ${health.status}, readyz ${ready.status}, GET /v1/jobs ${job.status}`)
    ctx.check('/healthz 200 while PostgreSQL is away', health.status === 200, `status ${health.status}`)
    ctx.check(
      '/readyz 503 naming PostgreSQL while it is away',
      ready.status === 503 && /postgres/i.test(readyBody),
      `${ready.status} ${readyBody.slice(0, 200)}`,
    )
    ctx.check(
      'the API answers 503 SERVICE_UNAVAILABLE with Retry-After, no internals',
      job.status === 503 &&
        job.body?.error === 'SERVICE_UNAVAILABLE' &&
        Number(job.headers.get('retry-after')) > 0 &&
        !/prisma|ECONNREFUSED|127\.0\.0\.1|\/work\/|\.ts:/i.test(job.text),
      `${job.status} Retry-After ${job.headers.get('retry-after')} ${job.text.slice(0, 200)}`,
    )
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)))
    await stack.pg.start()
    restartedAt = performance.now()
  })()
  const pacing = { inFlight: 2, paceMs: QUICK ? 600 : 900, onSubmitted: () => submittedCount++ }
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, JOBS / 2), pacing),
    submitJobs(stack, b, files.slice(JOBS / 2), pacing),
  ])
  await fault
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  ctx.recovery.seconds = (performance.now() - restartedAt) / 1000
  const retried = submitted.reduce((n, s) => n + s.retried, 0)
  ctx.detail.push(
    `${JOBS} jobs, outage ${OUTAGE_MS / 1000} s; ${retried} submissions retried; during: ${during.join('')}`,
  )
  ctx.check(
    'no answer ≥ 500 other than 503 while submitting',
    submitted.every((s) => s.serverErrors.length === 0),
    submitted.flatMap((s) => s.serverErrors).join('; ') || undefined,
  )
  await checkDeliveries(ctx, stack)
  await checkInvariants(ctx, stack, {
    mustComplete: submitted.flatMap((s) => s.jobIds),
    secrets: hooks.flatMap((h) => [h.secret, h.password, Buffer.from(`chaos:${h.password}`).toString('base64')]),
  })
})
