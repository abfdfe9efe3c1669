import type { JobView } from '@quire/core'
import { isFinalStatus, stagePosition } from '@quire/domain'
import { presentFormAJob } from './form-a.presenter.ts'
import { presentFormBJob } from './form-b.presenter.ts'
import type { StoredEvent } from './webhook-events.ts'

/** Stages after which a job has output to read. */
const OUTPUT_STAGES = new Set(['extract', 'validate', 'post_processing', 'destination'])

/**
 * Form A body. Fields with no value are omitted. On `*.exited` events `data.job` is a snapshot in the GET shape,
 * carrying the status at the time of the event plus the fields the spec names (job_id, execution_mode, priority).
 */
export function buildFormAPayload(opts: {
  deliveryId: string
  type: string
  event: StoredEvent
  job: JobView | null
  baseUrl: string
}): Record<string, unknown> {
  const { event, job } = opts
  const exited = event.transition === 'exited'
  const snapshot = (event.data.job ?? {}) as { status?: JobView['status']; stage_now?: string }
  const body: Record<string, unknown> = {
    id: opts.deliveryId,
    type: opts.type,
    timestamp: Math.floor(event.createdAt.getTime() / 1000),
    job_id: event.jobId ?? undefined,
    document_id: event.documentId ?? undefined,
    stage: event.stage ?? undefined,
    transition: event.transition ?? undefined,
    result_url:
      exited && job && event.stage && OUTPUT_STAGES.has(event.stage) ? `${opts.baseUrl}/v1/jobs/${job.id}` : undefined,
    data:
      exited && job
        ? {
            job: {
              ...presentFormAJob(snapshotOf(job, event.stage, snapshot)),
              job_id: job.id,
              execution_mode: job.executionMode,
              priority: job.priority,
            },
          }
        : {},
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined))
}

/**
 * The job as it stood when a stage exited, for `data.job`: the status (and stage) the event recorded, and nothing the
 * job did after it (a fan-out may run once the job has finished): no `completed_at` and no later stages in `trace`
 * while the recorded status is not final, no document completed yet. `destination.exited` is the spec's clean job-complete signal and commits
 * with the job's completion, so a finished job's snapshot there carries its final status.
 */
function snapshotOf(
  job: JobView,
  stage: string | null,
  recorded: { status?: JobView['status']; stage_now?: string },
): JobView {
  if (stage === 'destination' && isFinalStatus(job.status)) return job
  const status = recorded.status ?? job.status
  if (isFinalStatus(status)) return { ...job, status, stageNow: recorded.stage_now ?? job.stageNow }
  // No stage (a job-level event): every stage run so far.
  const upTo = stage === null ? Number.POSITIVE_INFINITY : stagePosition(stage)
  return {
    ...job,
    status,
    stageNow: recorded.stage_now ?? job.stageNow,
    completedAt: null,
    stages: job.stages.filter((s) => stagePosition(s.stage) <= upTo),
    // A document is completed by destination, the last stage: before the job has finished it was still processing.
    documents: job.documents.map((d) => (d.status === 'completed' ? { ...d, status: 'processing' } : d)),
  }
}

export function buildFormBPayload(opts: {
  deliveryId: string
  type: string
  event: StoredEvent
  job: JobView | null
  webhookId: string
}): Record<string, unknown> {
  const { event, job } = opts
  let data: Record<string, unknown> = { ...event.data }
  if (job && (opts.type === 'job.completed' || opts.type === 'job.failed')) {
    data = {
      job_id: job.id,
      pipeline_id: job.pipeline.id,
      status: event.data.status ?? job.status,
      documents: job.documents.filter((d) => d.status !== 'split').map((d) => d.id),
      ...(opts.type === 'job.failed' ? { error: presentFormBJob(job, { stages: false, result: false }).error } : {}),
    }
  } else if (job && opts.type === 'job.started') {
    data = { job_id: job.id, pipeline_id: job.pipeline.id, status: 'processing' }
  } else if (opts.type === 'doc.quarantined') {
    data = { file_name: event.data.file_name, reason: event.data.reason, message: event.data.message }
  } else if (opts.type.startsWith('review.')) {
    data = { job_id: event.jobId, document_id: event.documentId, action: event.data.action }
  } else if (job && opts.type === 'document.extracted') {
    const doc = job.documents.find((d) => d.id === event.documentId)
    data = { job_id: job.id, document_id: event.documentId, type: doc?.type ?? null, schema_id: doc?.schemaId ?? null }
  }
  return {
    event: opts.type,
    delivery_id: opts.deliveryId,
    occurred_at: event.createdAt.toISOString(),
    workspace_id: event.workspaceId,
    webhook_id: opts.webhookId,
    data,
  }
}
