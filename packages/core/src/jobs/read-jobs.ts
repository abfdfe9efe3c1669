import { DomainError, type JobStatus } from '@quire/domain'
import type { Db, Prisma } from '@quire/db'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from './job-view.ts'

/** Reads a job of the workspace; unknown → job_not_found, past retention → job_expired. */
export async function getJob(opts: { db: Db; workspaceId: string; jobId: string }): Promise<JobView> {
  const row = await opts.db.job.findUnique({ where: { id: opts.jobId }, include: JOB_VIEW_INCLUDE })
  if (!row || row.workspaceId !== opts.workspaceId) throw new DomainError('job_not_found', `job ${opts.jobId} not found`)
  if (row.expiredAt) throw new DomainError('job_expired', `job ${opts.jobId} is past retention; its result was deleted`)
  return toJobView(row)
}

export type JobListFilters = {
  status?: JobStatus[]
  pipelineId?: string
  sourceTag?: string
  environment?: string
  createdAfter?: Date
  createdBefore?: Date
}

type Cursor = { t: string; id: string }

export const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url')

export function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor
    if (typeof c.t !== 'string' || typeof c.id !== 'string' || Number.isNaN(Date.parse(c.t))) throw new Error()
    return c
  } catch {
    throw new DomainError('INVALID_PARAMETER', 'cursor is not one this service issued')
  }
}

/**
 * Newest first, keyset-paginated on (created_at, id): jobs added while a client pages never cause duplicates or
 * gaps, because the cursor names a position, not an offset.
 */
export async function listJobs(opts: {
  db: Db
  workspaceId: string
  limit: number
  cursor?: string
  filters: JobListFilters
}): Promise<{ data: JobView[]; nextCursor: string | null; hasMore: boolean }> {
  const f = opts.filters
  const and: Prisma.JobWhereInput[] = [{ workspaceId: opts.workspaceId }]
  if (f.status?.length) and.push({ status: { in: f.status } })
  if (f.pipelineId) and.push({ pipelineId: f.pipelineId })
  if (f.sourceTag) and.push({ sourceTag: f.sourceTag })
  if (f.environment) and.push({ environment: f.environment })
  if (f.createdAfter) and.push({ createdAt: { gt: f.createdAfter } })
  if (f.createdBefore) and.push({ createdAt: { lt: f.createdBefore } })
  if (opts.cursor) {
    const c = decodeCursor(opts.cursor)
    const t = new Date(c.t)
    and.push({ OR: [{ createdAt: { lt: t } }, { createdAt: t, id: { lt: c.id } }] })
  }
  const rows = await opts.db.job.findMany({
    where: { AND: and },
    include: JOB_VIEW_INCLUDE,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit + 1,
  })
  const hasMore = rows.length > opts.limit
  const page = rows.slice(0, opts.limit)
  const last = page.at(-1)
  return {
    data: page.map(toJobView),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor({ t: last.createdAt.toISOString(), id: last.id }) : null,
  }
}
