import { PARKED_DOCUMENT_STATUSES } from '@quire/domain'
import { KEYSET_ORDER, KEYSET_ORDER_ASC, keysetAfter, keysetPage, type Db, type Prisma } from '@quire/db'

export type DocumentListFilters = {
  status?: string[]
  jobId?: string
  pipelineId?: string
  schemaId?: string
}

/** One row of the document list: enough for a review queue, without the extracted data. */
export type DocumentListItem = {
  id: string
  status: string
  job_id: string
  pipeline_id: string
  parent_id: string | null
  type: string | null
  schema_id: string | null
  pages: number[]
  /** Why the document was parked (the validate stage's or the last reviewer's problems), newest first. */
  review_problems: string[]
  created_at: string
  updated_at: string
}

/**
 * The workspace's documents, keyset-paginated (see @quire/db keyset). Filtered to review statuses only (`in_review`,
 * `escalated`), the oldest come first so that a review desk works the queue from the document that has waited
 * longest (DESIGN, "Review desk"); otherwise newest first, like the job list. Documents of jobs past retention are not
 * listed: reading them answers job_expired.
 */
export async function listDocuments(opts: {
  db: Db
  workspaceId: string
  limit: number
  cursor?: string
  filters: DocumentListFilters
}): Promise<{ data: DocumentListItem[]; nextCursor: string | null; hasMore: boolean }> {
  const f = opts.filters
  const oldestFirst = (f.status?.length ?? 0) > 0 && f.status!.every((s) => PARKED_DOCUMENT_STATUSES.includes(s))
  const direction = oldestFirst ? 'asc' : 'desc'
  const job: Prisma.JobWhereInput = { workspaceId: opts.workspaceId, expiredAt: null }
  if (f.pipelineId) job.pipelineId = f.pipelineId
  const and: Prisma.DocumentWhereInput[] = [{ job }]
  if (f.status?.length) and.push({ status: { in: f.status } })
  if (f.jobId) and.push({ jobId: f.jobId })
  if (f.schemaId) and.push({ schemaId: f.schemaId })
  and.push(keysetAfter(opts.cursor, direction))
  const rows = await opts.db.document.findMany({
    where: { AND: and },
    select: {
      id: true,
      status: true,
      jobId: true,
      parentId: true,
      type: true,
      schemaId: true,
      pages: true,
      createdAt: true,
      updatedAt: true,
      job: { select: { pipelineId: true } },
      events: {
        where: { type: { in: ['review_required', 'review_reject'] } },
        orderBy: { createdAt: 'desc' },
        take: 1,
        select: { data: true },
      },
    },
    orderBy: oldestFirst ? KEYSET_ORDER_ASC : KEYSET_ORDER,
    take: opts.limit + 1,
  })
  const { page, hasMore, nextCursor } = keysetPage(rows, opts.limit)
  return {
    hasMore,
    nextCursor,
    data: page.map((d) => ({
      id: d.id,
      status: d.status,
      job_id: d.jobId,
      pipeline_id: d.job.pipelineId,
      parent_id: d.parentId,
      type: d.type,
      schema_id: d.schemaId,
      pages: d.pages,
      review_problems: problemsOf(d.events[0]?.data),
      created_at: d.createdAt.toISOString(),
      updated_at: d.updatedAt.toISOString(),
    })),
  }
}

function problemsOf(data: unknown): string[] {
  const problems = (data as { problems?: unknown } | null)?.problems
  return Array.isArray(problems) ? problems.filter((p): p is string => typeof p === 'string') : []
}
