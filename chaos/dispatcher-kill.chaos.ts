// kill -9 the webhook dispatcher at random moments while deliveries are in flight (a slow receiver that sometimes
// answers 503, so retries are pending too); it is restarted after 1 s each time. Afterwards every event is delivered,
// each with its original delivery id and body, and no job's completion arrives under two ids.
import { sleep } from '../bench/lib/kit.ts'
import { checkDeliveries, waitDeliveriesSettled } from './lib/deliveries.ts'
import { checkInvariants } from './lib/invariants.ts'
import { QUICK, scenario } from './lib/report.ts'
import { killRepeatedly } from './lib/killer.ts'
import { startChaosStack } from './lib/stack.ts'
import { invoices, newWorkspace, receiverWebhook, submitJobs, waitAllFinal } from './lib/workload.ts'

const JOBS = QUICK ? 12 : 80

await scenario('kill -9 webhook dispatcher', async (ctx) => {
  const stack = await startChaosStack('dispatcher-kill', {
    receiver: {
      respond: () => ({ status: Math.random() < 0.1 ? 503 : 200, delayMs: Math.floor(Math.random() * 400) }),
    },
  })
  ctx.stacks.push(stack)
  const a = await newWorkspace(stack.baseUrl, 'A')
  const b = await newWorkspace(stack.baseUrl, 'B')
  const hooks = [await receiverWebhook(stack, a, 'a-hook'), await receiverWebhook(stack, b, 'b-hook')]
  const files = await invoices(JOBS)
  const killer = killRepeatedly(stack, 'webhook-dispatcher', {
    pauseMs: () => 500 + Math.random() * (QUICK ? 2500 : 4000),
    restartAfterMs: 1000,
  })
  const submitted = await Promise.all([
    submitJobs(stack, a, files.slice(0, JOBS / 2), { inFlight: 2 }),
    submitJobs(stack, b, files.slice(JOBS / 2), { inFlight: 2 }),
  ])
  await waitAllFinal(stack, QUICK ? 240_000 : 600_000)
  // Keep killing while deliveries are still being made, at least three times.
  const deadline = Date.now() + 180_000
  while (Date.now() < deadline) {
    const [row] = await stack.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
    )
    if (row!.n === 0 && killer.kills.length >= 3) break
    await sleep(300)
  }
  await killer.stop()
  await waitDeliveriesSettled(stack, 180_000)
  ctx.recovery.seconds = (performance.now() - killer.lastRestart()) / 1000
  const [count] = await stack.query<{ n: number; attempts: number }>(
    'SELECT count(*)::int AS n, coalesce(sum(attempts), 0)::int AS attempts FROM webhook_deliveries',
  )
  ctx.detail.push(
    `${JOBS} jobs, ${killer.kills.length} kills, ${count!.n} deliveries, ${count!.attempts} attempts, ${stack.receiver!.received.length} requests received`,
  )
  ctx.check('the dispatcher was killed mid-delivery', killer.kills.length >= 3, `${killer.kills.length} kills`)
  ctx.check(
    'no answer ≥ 500 while submitting',
    submitted.every((s) => s.serverErrors.length === 0),
    submitted.flatMap((s) => s.serverErrors).join('; ') || undefined,
  )
  await checkDeliveries(ctx, stack)
  await checkInvariants(ctx, stack, {
    mustComplete: submitted.flatMap((s) => s.jobIds),
    secrets: hooks.flatMap((h) => [h.secret, h.password, Buffer.from(`chaos:${h.password}`).toString('base64')]),
  })
})
