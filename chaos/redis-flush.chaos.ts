// Redis loses everything mid-load: FLUSHALL, then it is shut down without saving and restarted empty (no persistence)
// while jobs are queued and running and webhooks are being delivered. PostgreSQL is the truth: the stage workers'
// requeue sweep (QUIRE_REQUEUE_AFTER_MS, shortened here to 5 s) rebuilds what was lost; every job completes once and
// every event is delivered once.
import { sleep } from '../bench/lib/kit.ts'
import { checkDeliveries } from './lib/deliveries.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { startChaosStack } from './lib/stack.ts'
import { invoices, newWorkspace, receiverWebhook, submitJobs, waitAllFinal } from './lib/workload.ts'

const JOBS = QUICK ? 40 : 120

await scenario('Redis flushed and restarted', async (ctx) => {
  const stack = await startChaosStack('redis-flush', {
    env: { QUIRE_REQUEUE_AFTER_MS: '5000', QUIRE_SWEEP_INTERVAL_MS: '1000' },
    receiver: {},
  })
  ctx.stacks.push(stack)
  const a = await newWorkspace(stack.baseUrl, 'A')
  const b = await newWorkspace(stack.baseUrl, 'B')
  const hooks = [await receiverWebhook(stack, a, 'a-hook'), await receiverWebhook(stack, b, 'b-hook')]
  const files = await invoices(JOBS, 5)
  let flushedAt = 0
  let submittedCount = 0
  const fault = (async () => {
    // Mid-load: a third of the jobs submitted (some already final, some running), the rest still to come.
    while (submittedCount < JOBS / 3) await sleep(100)
    await stack.redis.flushAndRestart(2000)
    flushedAt = performance.now()
  })()
  const pacing = { inFlight: 2, paceMs: QUICK ? 600 : 900, onSubmitted: () => submittedCount++ }
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, JOBS / 2), pacing),
    submitJobs(stack, b, files.slice(JOBS / 2), pacing),
  ])
  await fault
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  ctx.recovery.seconds = (performance.now() - flushedAt) / 1000
  const retried = submitted.reduce((n, s) => n + s.retried, 0)
  ctx.detail.push(`${JOBS} jobs; ${retried} submissions retried after 503 while Redis was away`)
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
