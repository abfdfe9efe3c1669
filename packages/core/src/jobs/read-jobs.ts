import { DomainError, type JobStatus } from '@quire/domain'
import { KEYSET_ORDER, keysetAfter, keysetPage, type Db, type Prisma } from '@quire/db'
import { JOB_VIEW_INCLUDE, toJobView, type JobView } from './job-view.ts'

/** Reads a job of the workspace; unknown → job_not_found, past retention → job_expired. */
export async function getJob(opts: { db: Db; workspaceId: string; jobId: string }): Promise<JobView> {
  const row = await opts.db.job.findUnique({ where: { id: opts.jobId }, include: JOB_VIEW_INCLUDE })
  if (!row || row.workspaceId !== opts.workspaceId)
    throw new DomainError('job_not_found', `job ${opts.jobId} not found`)
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

/**
 * Newest first, keyset-paginated (see @quire/db keyset). Jobs past retention are not listed: their result and
 * documents are gone and a read of them answers job_expired, so a list never offers what cannot be read.
 */
export async function listJobs(opts: {
  db: Db
  workspaceId: string
  limit: number
  cursor?: string
  filters: JobListFilters
}): Promise<{ data: JobView[]; nextCursor: string | null; hasMore: boolean }> {
  const f = opts.filters
  const and: Prisma.JobWhereInput[] = [{ workspaceId: opts.workspaceId }, { expiredAt: null }]
  if (f.status?.length) and.push({ status: { in: f.status } })
  if (f.pipelineId) and.push({ pipelineId: f.pipelineId })
  if (f.sourceTag) and.push({ sourceTag: f.sourceTag })
  if (f.environment) and.push({ environment: f.environment })
  if (f.createdAfter) and.push({ createdAt: { gt: f.createdAfter } })
  if (f.createdBefore) and.push({ createdAt: { lt: f.createdBefore } })
  and.push(keysetAfter(opts.cursor))
  const rows = await opts.db.job.findMany({
    where: { AND: and },
    include: JOB_VIEW_INCLUDE,
    orderBy: KEYSET_ORDER,
    take: opts.limit + 1,
  })
  const { page, hasMore, nextCursor } = keysetPage(rows, opts.limit)
  return { data: page.map(toJobView), hasMore, nextCursor }
}
