// Webhook invariants after a fault: every event fanned out, every delivery succeeded, every request the receiver got
// carries a delivery id PostgreSQL knows with that delivery's original body, every delivery reached the receiver, and
// no job's completion arrived under two delivery ids.
import { Redis } from 'ioredis'
import { sleep } from '../../bench/lib/kit.ts'
import type { ScenarioContext } from './report.ts'
import type { ChaosStack } from './stack.ts'

/** Waits until every event is fanned out and no delivery is pending; returns the seconds it took. */
export async function waitDeliveriesSettled(stack: ChaosStack, timeoutMs: number): Promise<number> {
  const t0 = performance.now()
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const [row] = await stack.query<{ pending: number; unfanned: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
              (SELECT count(*)::int FROM events WHERE fanned_out_at IS NULL) AS unfanned`,
    )
    if ((row!.pending === 0 && row!.unfanned === 0) || Date.now() > deadline) break
    await sleep(500)
  }
  return (performance.now() - t0) / 1000
}

/** What BullMQ recorded for the fan-out jobs of events left behind (the first line of each failure reason). */
async function whyNotFannedOut(stack: ChaosStack, events: { id: string; type: string; created_at: Date }[]) {
  const redis = new Redis(stack.redis.url)
  try {
    const out: string[] = []
    for (const e of events.slice(0, 5)) {
      const job = await redis.hgetall(`${stack.env.QUIRE_QUEUE_PREFIX}:webhook-fanout:fanout.${e.id}`)
      const reason = (job.failedReason ?? '').split('\n').filter(Boolean)
      out.push(
        `${e.id} ${e.type} at ${e.created_at.toISOString()}: BullMQ job ${job.finishedOn ? 'finished' : job.timestamp ? 'pending' : 'absent'}` +
          `${reason.length ? `, failed: ${reason.at(-1)?.trim().slice(0, 160)}` : ''}`,
      )
    }
    return out.join('; ')
  } finally {
    redis.disconnect()
  }
}

/** The delivery id and parsed body of one received request (Form A: header; Form B: body). */
function deliveryOf(headers: Record<string, string | string[]>, raw: Buffer) {
  let body: any = null
  try {
    body = JSON.parse(raw.toString())
  } catch {}
  const header = headers['x-service-delivery-id']
  const id = (Array.isArray(header) ? header[0] : header) ?? body?.delivery_id ?? body?.id
  return { id: typeof id === 'string' ? id : undefined, body }
}

export async function checkDeliveries(ctx: ScenarioContext, stack: ChaosStack, opts: { settleWithinMs?: number } = {}) {
  const receiver = stack.receiver
  if (!receiver) throw new Error('the stack has no receiver')
  await waitDeliveriesSettled(stack, opts.settleWithinMs ?? 90_000)
  const statuses = await stack.query<{ status: string; n: number }>(
    'SELECT status::text AS status, count(*)::int AS n FROM webhook_deliveries GROUP BY status',
  )
  const unfanned = await stack.query<{ id: string; type: string; created_at: Date }>(
    'SELECT id, type, created_at FROM events WHERE fanned_out_at IS NULL ORDER BY created_at',
  )
  ctx.check(
    'every event fanned out, every delivery succeeded',
    unfanned.length === 0 && statuses.every((s) => s.status === 'succeeded'),
    `events not fanned out ${unfanned.length}${unfanned.length ? ` (${await whyNotFannedOut(stack, unfanned)})` : ''}; ` +
      `deliveries ${JSON.stringify(Object.fromEntries(statuses.map((s) => [s.status, s.n])))}`,
  )

  const rows = await stack.query<{ id: string; body: string }>('SELECT id, body FROM webhook_deliveries')
  const known = new Map(rows.map((r) => [r.id, r.body]))
  const seen = new Set<string>()
  const unknown: string[] = []
  const altered: string[] = []
  const completions = new Map<string, Set<string>>()
  for (const r of receiver.received) {
    const { id, body } = deliveryOf(r.headers, r.rawBody)
    if (!id || !known.has(id)) {
      unknown.push(id ?? `(none) ${r.rawBody.toString().slice(0, 80)}`)
      continue
    }
    seen.add(id)
    if (known.get(id) !== r.rawBody.toString()) altered.push(id)
    const type = body?.event ?? body?.type
    const jobId = body?.data?.job_id ?? body?.job_id
    if (type === 'job.completed' && typeof jobId === 'string') {
      completions.set(`${r.path} ${jobId}`, (completions.get(`${r.path} ${jobId}`) ?? new Set()).add(id))
    }
  }
  const missing = [...known.keys()].filter((id) => !seen.has(id))
  ctx.check(
    'every delivery arrived with its original delivery id and body',
    unknown.length === 0 && altered.length === 0 && missing.length === 0,
    `${receiver.received.length} requests, ${known.size} deliveries; unknown ids ${unknown.length}` +
      `${unknown.length ? ` (${unknown.slice(0, 3).join(', ')})` : ''}; bodies changed ${altered.length}; never arrived ${missing.length}` +
      `${missing.length ? ` (${missing.slice(0, 3).join(', ')})` : ''}`,
  )
  const twice = [...completions].filter(([, ids]) => ids.size > 1)
  ctx.check(
    'each job completion delivered under one delivery id',
    twice.length === 0,
    twice.length
      ? `${twice.length} jobs, e.g. ${twice[0]![0]}: ${[...twice[0]![1]].join(', ')}`
      : `${completions.size} completions`,
  )
}
