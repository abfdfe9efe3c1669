import { type JobStatus, stagePosition } from '@quire/domain'
import type { Prisma } from '@quire/db'
import { jobFilesOf } from './job-files.ts'

/** The form-neutral read model of a job. Form A and Form B presenters shape it for the wire. */
export type JobView = {
  id: string
  workspaceId: string
  status: JobStatus
  stageNow: string | null
  failedStage: string | null
  errorCode: string | null
  errorMessage: string | null
  pipeline: { id: string; version: number }
  priority: string
  executionMode: string
  environment: string
  sourceTag: string | null
  clientReferenceId: string | null
  schemaId: string | null
  metadata: Record<string, string> | null
  degradationReason: string | null
  files: { fileName: string; mimeType: string; fileType: string; pageCount: number; sizeBytes: number }[]
  pageCount: number
  creditsReserved: number
  creditsUsed: number | null
  createdAt: Date
  startedAt: Date | null
  completedAt: Date | null
  expired: boolean
  documents: {
    id: string
    status: string
    parentId: string | null
    type: string | null
    schemaId: string | null
    pages: number[]
    data: Record<string, { value: unknown; confidence: number }> | null
    /** Why the document failed (status `failed`). */
    error: { code: string; message: string } | null
  }[]
  stages: {
    stage: string
    status: string
    startedAt: Date
    completedAt: Date | null
    ms: number | null
    /** CPU time the stage used, when measured. */
    cpuMs: number | null
    credits: number
    attempts: number
    error: string | null
  }[]
}

export const JOB_VIEW_INCLUDE = {
  files: { orderBy: { position: 'asc' as const } },
  documents: { orderBy: { id: 'asc' as const } },
  stageRuns: { orderBy: { startedAt: 'asc' as const } },
}

// Named through Prisma's payload type (not ReturnType of a query) so the emitted declarations can name it.
type JobRow = Prisma.JobGetPayload<{ include: typeof JOB_VIEW_INCLUDE }>

export function toJobView(row: JobRow): JobView {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    status: row.status as JobStatus,
    stageNow: row.stageNow,
    failedStage: row.failedStage,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    pipeline: { id: row.pipelineId, version: row.pipelineVersion },
    priority: row.priority,
    executionMode: row.executionMode,
    environment: row.environment,
    sourceTag: row.sourceTag,
    clientReferenceId: row.clientReferenceId,
    schemaId: row.schemaId,
    metadata: (row.metadata as Record<string, string> | null) ?? null,
    degradationReason: row.degradationReason,
    files: jobFilesOf(row).map((f) => ({
      fileName: f.fileName,
      mimeType: f.mimeType,
      fileType: f.fileType,
      pageCount: f.pageCount,
      sizeBytes: f.sizeBytes,
    })),
    pageCount: row.pageCount,
    creditsReserved: row.creditsReserved,
    creditsUsed: row.creditsUsed,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    completedAt: row.completedAt,
    expired: row.expiredAt !== null,
    documents: row.documents.map((d) => ({
      id: d.id,
      status: d.status,
      parentId: d.parentId,
      type: d.type,
      schemaId: d.schemaId,
      pages: d.pages,
      data: (d.data as JobView['documents'][number]['data']) ?? null,
      error: d.status === 'failed' ? { code: d.errorCode ?? 'failed', message: d.errorMessage ?? '' } : null,
    })),
    stages: inPipelineOrder(row.stageRuns).map((r) => ({
      stage: r.stage,
      status: r.status,
      startedAt: r.startedAt,
      completedAt: r.completedAt,
      ms: r.ms,
      cpuMs: r.cpuMs,
      credits: r.credits,
      attempts: r.attempts,
      error: r.error,
    })),
  }
}

/**
 * Stage runs in pipeline order (DESIGN: "Stages, in order: source, initialization, ..."), not in the order they
 * started: stages a worker chains start within the same millisecond, so their start times do not order them.
 */
function inPipelineOrder<R extends { stage: string; startedAt: Date }>(runs: readonly R[]): R[] {
  return [...runs].sort(
    (a, b) => stagePosition(a.stage) - stagePosition(b.stage) || a.startedAt.getTime() - b.startedAt.getTime(),
  )
}
