import { DomainError, isFinalStatus, newId } from '@quire/domain'
import type { Db, RawSql, Tx } from '@quire/db'
import { outbox, type Priority } from '@quire/queues'
import { recordEvents } from '../events/record-event.ts'
import { lockJob, transitionJob } from './job-transitions.ts'

/**
 * Blocked jobs and error groups (DESIGN, "Processing lifecycle"). A failure an operator can fix parks the job
 * (`blocked`, its hold kept) in the error group of its (workspace, pipeline, stage, error code). The first job opens
 * the group (`error_group.opened`); the group's jobs are retried on `retryScheduleMs`; a job blocking again after the
 * last retry escalates the group (`error_group.escalated`, admin notification). An operator re-runs every job of a
 * group after fixing the cause; a job leaves the group when the stage that blocked it completes, or when it ends
 * (failed, cancelled); the last one out resolves the group (`error_group.resolved`).
 */

export type ErrorGroupView = {
  id: string
  workspace_id: string
  pipeline_id: string
  stage: string
  error_code: string
  status: 'open' | 'escalated' | 'resolved'
  last_error: string
  jobs: { blocked: number; in_group: number; total: number }
  retries: { done: number; next_at: string | null }
  reruns: number
  opened_at: string
  escalated_at: string | null
  resolved_at: string | null
}

type GroupRow = {
  id: string
  workspace_id: string
  pipeline_id: string
  stage: string
  error_code: string
  status: 'open' | 'escalated' | 'resolved'
  retries: number
  inserted: boolean
}

/**
 * Parks a job that hit an operator-fixable failure in `stage`. Returns false when the job is no longer running
 * (cancelled meanwhile): nothing changes then.
 */
export async function blockJob(
  deps: { db: Db; onCommit?: () => void },
  opts: { jobId: string; stage: string; code: string; message: string; retryScheduleMs: readonly number[] },
): Promise<boolean> {
  const changed = await deps.db.$transaction(async (tx) => {
    const status = await lockJob(tx, opts.jobId)
    if (!status || isFinalStatus(status)) return false
    const job = await tx.job.findUniqueOrThrow({ where: { id: opts.jobId } })
    const message = opts.message.slice(0, 2000)
    if (status !== 'blocked') {
      await transitionJob(tx, { jobId: job.id, from: status, to: 'blocked', data: { stageNow: opts.stage } })
    }
    await tx.stageRun.updateMany({
      where: { jobId: job.id, stage: opts.stage, status: 'running' },
      data: { status: 'failed', error: message, completedAt: new Date() },
    })
    const openKey = [job.workspaceId, job.pipelineId, opts.stage, opts.code].join('|')
    const firstDelay = opts.retryScheduleMs[0]
    const nextRetryAt = firstDelay === undefined ? null : new Date(Date.now() + firstDelay)
    // One unresolved group per key: the unique open_key makes concurrent first failures agree on one row.
    const rows = await tx.$queryRaw<GroupRow[]>`
      INSERT INTO error_groups (id, workspace_id, pipeline_id, stage, error_code, open_key, last_error, next_retry_at)
      VALUES (${newId('egr')}, ${job.workspaceId}, ${job.pipelineId}, ${opts.stage}, ${opts.code}, ${openKey},
              ${message}, ${nextRetryAt})
      ON CONFLICT (open_key) DO UPDATE SET last_error = EXCLUDED.last_error
      RETURNING id, workspace_id, pipeline_id, stage, error_code, status::text AS status, retries,
                (xmax = 0) AS inserted`
    const group = rows[0]!
    const events: Parameters<typeof recordEvents>[1] = []
    const base = { workspaceId: job.workspaceId, jobId: job.id }
    const groupData = { error_group_id: group.id, stage: group.stage, error_code: group.error_code }
    if (job.errorGroupId !== group.id) {
      await tx.job.update({ where: { id: job.id }, data: { errorGroupId: group.id } })
      await tx.errorGroup.update({ where: { id: group.id }, data: { jobsTotal: { increment: 1 } } })
      events.push({ ...base, type: 'job.blocked', data: { ...groupData, message } })
    }
    if (group.inserted) {
      events.push({ ...base, type: 'error_group.opened', data: groupData })
      if (nextRetryAt === null) await escalateInTx(tx, group, message, events)
    } else if (group.status === 'open' && group.retries >= opts.retryScheduleMs.length) {
      // This job blocked again after the last automatic retry: the retries have run out.
      await escalateInTx(tx, group, message, events)
    }
    await recordEvents(tx, events)
    return true
  })
  deps.onCommit?.()
  return changed
}

async function escalateInTx(
  tx: Tx,
  group: GroupRow,
  message: string,
  events: Parameters<typeof recordEvents>[1],
): Promise<void> {
  await tx.errorGroup.update({
    where: { id: group.id },
    data: { status: 'escalated', escalatedAt: new Date(), nextRetryAt: null },
  })
  await tx.notification.create({
    data: {
      id: newId('ntf'),
      workspaceId: group.workspace_id,
      kind: 'error_group_escalated',
      message:
        `Jobs of pipeline ${group.pipeline_id} are blocked in stage ${group.stage} (${group.error_code}) and ` +
        `automatic retries ran out; fix the cause, then POST /admin/v1/error-groups/${group.id}/rerun. ` +
        `Last error: ${message}`,
      data: {
        error_group_id: group.id,
        pipeline_id: group.pipeline_id,
        stage: group.stage,
        error_code: group.error_code,
      },
    },
  })
  const anyJob = await tx.job.findFirst({ where: { errorGroupId: group.id }, select: { id: true } })
  events.push({
    workspaceId: group.workspace_id,
    jobId: anyJob?.id ?? null,
    type: 'error_group.escalated',
    data: { error_group_id: group.id, stage: group.stage, error_code: group.error_code },
  })
}

/**
 * The job left `blocked` for good (its blocked stage completed, or it ended): it leaves its group, and the last job
 * out resolves the group. Called in the transaction that made the change, with the job row locked.
 */
export async function leaveErrorGroupInTx(
  tx: RawSql,
  job: { id: string; workspaceId: string; errorGroupId: string | null },
) {
  if (!job.errorGroupId) return
  const groupId = job.errorGroupId
  // Raw statements only: a stage's checkpoint runs this in a transaction sent without Prisma (directTransaction).
  await tx.$executeRaw`UPDATE jobs SET error_group_id = NULL WHERE id = ${job.id}`
  // Lock the group so that the last two jobs leaving at once cannot both see one left.
  const locked = await tx.$queryRaw<{ status: string }[]>`
    SELECT status::text AS status FROM error_groups WHERE id = ${groupId} FOR UPDATE`
  if (!locked[0] || locked[0].status === 'resolved') return
  const [left] = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM jobs WHERE error_group_id = ${groupId}`
  if ((left?.n ?? 0) > 0) return
  const [group] = await tx.$queryRaw<{ stage: string; error_code: string }[]>`
    UPDATE error_groups SET status = 'resolved', open_key = NULL, resolved_at = ${new Date().toISOString()}::timestamp(3),
                            next_retry_at = NULL
    WHERE id = ${groupId}
    RETURNING stage, error_code`
  if (!group) return
  await recordEvents(tx, [
    {
      workspaceId: job.workspaceId,
      jobId: job.id,
      type: 'error_group.resolved',
      data: { error_group_id: groupId, stage: group.stage, error_code: group.error_code },
    },
  ])
}

/** Queues the blocked stage again for every blocked job of a group, under a BullMQ id of its own (`run`). */
async function requeueBlockedJobs(tx: Tx, groupId: string, stage: string, run: number): Promise<number> {
  const jobs = await tx.job.findMany({
    where: { errorGroupId: groupId, status: 'blocked' },
    select: { id: true, priority: true },
  })
  for (const j of jobs) {
    await outbox.stage(
      tx,
      { stage: stage as never, jobId: j.id, run },
      { priority: (j.priority as Priority) ?? 'standard' },
    )
  }
  return jobs.length
}

/**
 * Runs the automatic retries that are due: each open group whose `next_retry_at` has passed has its blocked jobs
 * queued again, and its next retry scheduled from `retryScheduleMs` (none after the last: a job blocking again then
 * escalates the group). Groups are claimed with SKIP LOCKED, so every worker process can run this.
 */
export async function retryDueErrorGroups(opts: {
  db: Db
  retryScheduleMs: readonly number[]
  now?: Date
  onCommit?: () => void
}): Promise<number> {
  const now = opts.now ?? new Date()
  const retried = await opts.db.$transaction(async (tx) => {
    const due = await tx.$queryRaw<{ id: string; stage: string; retries: number; reruns: number }[]>`
      SELECT id, stage, retries, reruns FROM error_groups
      WHERE status = 'open' AND next_retry_at IS NOT NULL AND next_retry_at <= ${now}
      ORDER BY next_retry_at LIMIT 50 FOR UPDATE SKIP LOCKED`
    for (const g of due) {
      const retries = g.retries + 1
      const delay = opts.retryScheduleMs[retries]
      await tx.errorGroup.update({
        where: { id: g.id },
        data: { retries, nextRetryAt: delay === undefined ? null : new Date(now.getTime() + delay) },
      })
      await requeueBlockedJobs(tx, g.id, g.stage, retries + g.reruns * 1000)
    }
    return due.length
  })
  if (retried) opts.onCommit?.()
  return retried
}

/** An operator's re-run after fixing the cause: every blocked job of the group runs its blocked stage again now. */
export async function rerunErrorGroup(opts: { db: Db; groupId: string; onCommit?: () => void }) {
  const out = await opts.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ status: string; stage: string; retries: number; reruns: number }[]>`
      SELECT status::text AS status, stage, retries, reruns FROM error_groups WHERE id = ${opts.groupId} FOR UPDATE`
    const g = rows[0]
    if (!g) throw new DomainError('not_found', `error group ${opts.groupId} not found`)
    if (g.status === 'resolved') throw new DomainError('ERROR_GROUP_RESOLVED', 'the error group is already resolved')
    const reruns = g.reruns + 1
    await tx.errorGroup.update({ where: { id: opts.groupId }, data: { reruns } })
    return requeueBlockedJobs(tx, opts.groupId, g.stage, reruns * 1000 + g.retries)
  })
  opts.onCommit?.()
  return { requeued: out, group: await getErrorGroup({ db: opts.db, groupId: opts.groupId }) }
}

async function countsFor(db: Db, ids: string[]) {
  if (ids.length === 0) return new Map<string, { blocked: number; in_group: number }>()
  const rows = await db.$queryRaw<{ error_group_id: string; blocked: number; in_group: number }[]>`
    SELECT error_group_id, count(*) FILTER (WHERE status = 'blocked')::int AS blocked, count(*)::int AS in_group
    FROM jobs WHERE error_group_id = ANY(${ids}) AND error_group_id IS NOT NULL -- the partial index's condition
    GROUP BY error_group_id`
  return new Map(rows.map((r) => [r.error_group_id, { blocked: r.blocked, in_group: r.in_group }]))
}

type ErrorGroupRow = NonNullable<Awaited<ReturnType<Db['errorGroup']['findUnique']>>>

function toView(g: ErrorGroupRow, counts: { blocked: number; in_group: number } | undefined): ErrorGroupView {
  return {
    id: g.id,
    workspace_id: g.workspaceId,
    pipeline_id: g.pipelineId,
    stage: g.stage,
    error_code: g.errorCode,
    status: g.status,
    last_error: g.lastError,
    jobs: { blocked: counts?.blocked ?? 0, in_group: counts?.in_group ?? 0, total: g.jobsTotal },
    retries: { done: g.retries, next_at: g.nextRetryAt?.toISOString() ?? null },
    reruns: g.reruns,
    opened_at: g.openedAt.toISOString(),
    escalated_at: g.escalatedAt?.toISOString() ?? null,
    resolved_at: g.resolvedAt?.toISOString() ?? null,
  }
}

export async function getErrorGroup(opts: { db: Db; groupId: string }): Promise<ErrorGroupView> {
  const g = await opts.db.errorGroup.findUnique({ where: { id: opts.groupId } })
  if (!g) throw new DomainError('not_found', `error group ${opts.groupId} not found`)
  return toView(g, (await countsFor(opts.db, [g.id])).get(g.id))
}

/** Error groups, newest first, optionally by status and workspace, with their job counts. */
export async function listErrorGroups(opts: {
  db: Db
  status?: 'open' | 'escalated' | 'resolved'
  workspaceId?: string
  limit?: number
}): Promise<ErrorGroupView[]> {
  const rows = await opts.db.errorGroup.findMany({
    where: {
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.workspaceId ? { workspaceId: opts.workspaceId } : {}),
    },
    orderBy: [{ openedAt: 'desc' }, { id: 'desc' }],
    take: opts.limit ?? 100,
  })
  const counts = await countsFor(
    opts.db,
    rows.map((r) => r.id),
  )
  return rows.map((r) => toView(r, counts.get(r.id)))
}
