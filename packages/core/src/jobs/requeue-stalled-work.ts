import { WORKER_STAGES } from '@quire/domain'
import type { Db } from '@quire/db'
import { outbox, type Priority } from '@quire/queues'
import { loadJobForStage } from '../stages/stage-context.ts'

/**
 * Redis holds only queue state that PostgreSQL can rebuild. Work that has made no progress for `staleMs` is queued
 * again under its deterministic BullMQ id: while BullMQ still holds the job (waiting, delayed or active) the add is a
 * no-op; if Redis lost it, or BullMQ finished it without PostgreSQL recording the outcome (it failed during a
 * database outage), the work resumes. Covers running jobs (the stage they wait for), events not yet fanned
 * out, and webhook deliveries past their due time.
 */
export async function requeueStalledWork(opts: { db: Db; staleMs: number; now?: Date; batch?: number }) {
  const now = opts.now ?? new Date()
  const cutoff = new Date(now.getTime() - opts.staleMs)
  const take = opts.batch ?? 200
  let jobs = 0

  const running = await opts.db.job.findMany({
    where: { status: { in: ['queued', 'preprocessing', 'processing'] }, createdAt: { lt: cutoff }, expiredAt: null },
    select: { id: true },
    orderBy: { createdAt: 'asc' },
    take,
  })
  for (const { id } of running) {
    const job = await loadJobForStage(opts.db, id)
    if (!job) continue
    const done = new Set(
      job.stageRuns.filter((r) => r.status === 'completed' || r.status === 'skipped').map((r) => r.stage),
    )
    const waiting = WORKER_STAGES.find((s) => !done.has(s))
    if (!waiting) continue
    const lastActivity = Math.max(
      job.createdAt.getTime(),
      ...job.stageRuns.map((r) => (r.completedAt ?? r.startedAt).getTime()),
    )
    if (lastActivity > cutoff.getTime()) continue
    await opts.db.$transaction((tx) =>
      outbox.stage(
        tx,
        { stage: waiting, jobId: id },
        { priority: (job.priority as Priority) ?? 'standard', replaceFinished: true },
      ),
    )
    jobs++
  }

  const events = await opts.db.event.findMany({
    where: { fannedOutAt: null, createdAt: { lt: cutoff } },
    select: { id: true },
    orderBy: { createdAt: 'asc' },
    take,
  })
  if (events.length) {
    await opts.db.$transaction((tx) =>
      outbox.fanout(
        tx,
        events.map((e) => ({ eventId: e.id })),
        { replaceFinished: true },
      ),
    )
  }

  const deliveries = await opts.db.webhookDelivery.findMany({
    where: {
      status: 'pending',
      OR: [{ nextAttemptAt: { lt: cutoff } }, { nextAttemptAt: null, createdAt: { lt: cutoff } }],
    },
    select: { id: true, attempts: true },
    take,
  })
  if (deliveries.length) {
    await opts.db.$transaction((tx) =>
      outbox.delivery(
        tx,
        deliveries.map((d) => ({ deliveryId: d.id, attempt: d.attempts + 1 })),
        { replaceFinished: true },
      ),
    )
  }
  return { jobs, events: events.length, deliveries: deliveries.length }
}
