import { isFinalStatus } from '@quire/domain'
import type { JobView, WebhookView } from '@quire/core'

export type FormBInclude = { stages: boolean; result: boolean }

export function parseInclude(raw: string | undefined): FormBInclude {
  const parts = new Set((raw ?? '').split(',').map((s) => s.trim()))
  return { stages: parts.has('stages'), result: parts.has('result') }
}

const apiType = (job: JobView) => (job.pipeline.id === 'parse' ? 'parse' : 'extract')

export function presentFormBJob(job: JobView, include: FormBInclude, now = new Date()) {
  const file = job.files[0]
  const end = job.completedAt ?? now
  // A stage's credits are what the job is charged for it: what it measured while the job runs, and once the job is
  // settled no more than the settlement has left (spec: "settles to actual cost"), so a final job's stages add up to
  // its charge: nothing for a failed, timed-out or cancelled job, the delivered part for completed_with_errors.
  let unsettled = isFinalStatus(job.status) && job.creditsUsed !== null ? job.creditsUsed : Number.POSITIVE_INFINITY
  const charged = (measured: number): number => {
    const credits = Math.min(measured, unsettled)
    unsettled -= credits
    return credits
  }
  // DESIGN: a blocked job (parked for an operator) is shown as `processing`, with the stage it waits in.
  const status = job.status === 'blocked' ? 'processing' : job.status
  return {
    job_id: job.id,
    status,
    ...(!isFinalStatus(job.status) && job.stageNow ? { stage_now: job.stageNow } : {}),
    api_type: apiType(job),
    execution_mode: job.executionMode,
    priority: job.priority,
    environment: job.environment,
    pipeline_id: job.pipeline.id,
    pipeline_version: job.pipeline.version,
    input: { file_name: file?.fileName ?? '', mime_type: file?.mimeType ?? '', page_count: job.pageCount },
    created_at: job.createdAt.toISOString(),
    completed_at: job.completedAt?.toISOString() ?? null,
    total_time_taken_ms: Math.max(0, end.getTime() - job.createdAt.getTime()),
    ...(job.clientReferenceId ? { client_reference_id: job.clientReferenceId } : {}),
    ...(job.degradationReason ? { degradation_reason: job.degradationReason } : {}),
    ...((job.status === 'failed' || job.status === 'completed_with_errors' || job.status === 'timed_out') &&
    job.failedStage
      ? { error: { code: job.errorCode ?? 'failed', message: job.errorMessage ?? '', stage: job.failedStage } }
      : {}),
    // A job paused for review, or `partial` (review.hold `document`), names the documents a reviewer must decide
    // (POST /v1/documents/{id}/review).
    ...(job.status === 'awaiting_review' || job.status === 'partial'
      ? {
          review: {
            documents: job.documents
              .filter((d) => d.status === 'in_review' || d.status === 'escalated')
              .map((d) => ({ id: d.id, status: d.status })),
          },
        }
      : {}),
    ...(include.stages
      ? {
          stages: job.stages
            .filter((s) => s.stage !== 'source')
            .map((s) => ({
              stage: s.stage,
              status: s.status,
              started_at: s.startedAt.toISOString(),
              completed_at: s.completedAt?.toISOString() ?? null,
              ms: s.ms,
              credits: charged(s.credits),
              attempts: s.attempts,
              ...(s.error ? { error: s.error } : {}),
            })),
        }
      : {}),
    // Spec (Job, Form B): `result` is returned only with include=result and only when status is `completed`; a
    // completed_with_errors job names its failing stage in `error` instead.
    ...(include.result && job.status === 'completed'
      ? {
          result: {
            documents: job.documents
              .filter((d) => d.status !== 'split')
              .map((d) => ({
                id: d.id,
                type: d.type,
                schema_id: d.schemaId,
                pages: d.pages,
                data: d.data ?? {},
                ...(d.error ? { status: d.status, error: d.error } : {}),
              })),
          },
        }
      : {}),
  }
}

/** One entry of a Form B submit response: the job was accepted and runs on. */
export function presentFormBSubmitted(job: JobView, baseUrl: string) {
  const statusUrl = `${baseUrl}/v1/jobs/${job.id}`
  const running = job.status !== 'queued'
  return {
    job_id: job.id,
    status: running ? 'processing' : 'queued',
    execution_mode: job.executionMode === 'sync' && running ? 'sync' : 'async',
    status_url: statusUrl,
    result_url: `${statusUrl}?include=result`,
    ...(job.degradationReason ? { degradation_reason: job.degradationReason } : {}),
    submitted_at: job.createdAt.toISOString(),
    ...(job.clientReferenceId ? { client_reference_id: job.clientReferenceId } : {}),
  }
}

export function presentFormBWebhook(w: WebhookView, opts: { revealSecret: boolean }) {
  const auth = w.auth
  return {
    id: w.id,
    name: w.name,
    url: w.url,
    events: w.events.length ? w.events : ['*'],
    auth: auth.type === 'api_key' ? 'apikey' : auth.type === 'basic' ? 'basic' : 'none',
    ...(auth.type === 'api_key'
      ? { apikey: { location: auth.location ?? 'header', name: auth.headerName, key: '***' } }
      : {}),
    ...(auth.type === 'basic' ? { basic: { username: auth.username, password: '***' } } : {}),
    status: w.status,
    ...(opts.revealSecret && w.secret ? { secret: w.secret } : {}),
    created_at: w.createdAt.toISOString(),
  }
}
