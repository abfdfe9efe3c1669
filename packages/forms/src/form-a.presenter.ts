import type { JobView, WebhookView } from '@quire/core'
import type { FileType } from '@quire/domain'

/** Form A names some stages differently in `stage_now` and `trace`. */
const FORM_A_STAGE_NAMES: Record<string, string> = {
  initialization: 'init',
  split_classify: 'splitclassify',
  post_processing: 'postprocessing',
}
export const formAStageName = (stage: string): string => FORM_A_STAGE_NAMES[stage] ?? stage

/** Form A takes these types only (spec, "POST /v1/jobs, Form A": PDF, TIFF, PNG, JPEG or DOCX). */
export const FORM_A_UPLOAD_TYPES = ['pdf', 'tiff', 'png', 'jpeg', 'docx'] as const satisfies readonly FileType[]

/** Form A's four job statuses (spec, "Job statuses, Form A"). */
export const FORM_A_STATUSES = ['processing', 'completed', 'failed', 'cancelled'] as const

/** Form A has four statuses; the internal ones collapse onto them. */
export function formAStatus(status: JobView['status']): (typeof FORM_A_STATUSES)[number] {
  switch (status) {
    case 'completed':
    case 'completed_with_errors':
      return 'completed'
    case 'failed':
    case 'timed_out':
      return 'failed'
    case 'cancelled':
      return 'cancelled'
    default:
      return 'processing'
  }
}

export const formAVersion = (n: number): string => `v${n}`

export function parseFormAVersion(raw: string): number | null {
  const m = /^v?(\d{1,9})$/.exec(raw.trim())
  return m ? Number(m[1]) : null
}

/** The 202 body of a Form A submission: one object for the whole batch. */
export function presentFormAJobCreated(job: JobView) {
  return {
    id: job.id,
    status: formAStatus(job.status),
    stage_now: formAStageName(job.stageNow ?? 'initialization'),
    pipeline: { id: job.pipeline.id, version: formAVersion(job.pipeline.version) },
    documents: job.files.length,
    ...(job.sourceTag ? { source_tag: job.sourceTag } : {}),
    created_at: job.createdAt.toISOString(),
  }
}

export function presentFormAJob(job: JobView) {
  const status = formAStatus(job.status)
  // machine_seconds: the CPU time the stages really used (wall time for stages recorded before it was measured).
  const cpuMs = job.stages.reduce((n, s) => n + (s.cpuMs ?? s.ms ?? 0), 0)
  return {
    id: job.id,
    status,
    ...(status === 'processing' ? { stage_now: formAStageName(job.stageNow ?? 'initialization') } : {}),
    pipeline: { id: job.pipeline.id, version: formAVersion(job.pipeline.version) },
    // A failed document (a bad file of a batch, a split child) carries its error; the job goes on without it.
    documents: job.documents.map((d) => ({
      id: d.id,
      status: d.status,
      ...(d.error ? { error: d.error.message } : {}),
    })),
    ...(job.sourceTag ? { source_tag: job.sourceTag } : {}),
    ...(job.metadata ? { metadata: job.metadata } : {}),
    run_kind: job.environment === 'test' ? 'test' : 'prod',
    created_at: job.createdAt.toISOString(),
    ...(job.completedAt ? { completed_at: job.completedAt.toISOString() } : {}),
    machine_seconds: Math.ceil(cpuMs / 1000),
    trace: job.stages
      .filter((s) => s.stage !== 'source' && s.status !== 'skipped' && s.status !== 'running')
      .map((s) => ({ stage: formAStageName(s.stage), ms: s.ms ?? 0, ok: s.status === 'completed' && !s.error })),
    // failed_stage names the pipeline stage (DESIGN: a damaged file fails with `failed_stage: "initialization"`);
    // only stage_now and trace use Form A's short names.
    ...(job.failedStage && status === 'failed'
      ? { failed_stage: job.failedStage, error: job.errorMessage ?? job.errorCode ?? 'failed' }
      : {}),
  }
}

export function presentFormAWebhook(w: WebhookView, opts: { revealSecret: boolean }) {
  const auth = w.auth
  return {
    id: w.id,
    name: w.name,
    url: w.url,
    auth_type: auth.type === 'api_key' ? 'API_KEY' : auth.type === 'basic' ? 'BASIC' : 'NONE',
    ...(auth.type === 'api_key' ? { auth: { header_name: auth.headerName, api_key: '***' } } : {}),
    ...(auth.type === 'basic' ? { auth: { username: auth.username, password: '***' } } : {}),
    events: w.events,
    headers: w.headers,
    ...(w.description ? { description: w.description } : {}),
    status: w.status,
    hmac_secret: opts.revealSecret && w.secret ? w.secret : '***',
    created_at: w.createdAt.toISOString(),
  }
}
