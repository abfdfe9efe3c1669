import type { JobView, NewWebhook, PipelineView, WebhookView } from '@quire/core'
import { FILE_TYPES, type FileType, JOB_STATUSES, type JobStatus, type Scope } from '@quire/domain'
import { SIGNATURE_HEADER, signFormA, signFormB, TIMESTAMP_HEADER } from '@quire/signing'
import { formAShouldRetry, formBRetryDelayMs } from '@quire/webhooks'
import {
  FORM_A_STATUSES,
  FORM_A_UPLOAD_TYPES,
  formAStageName,
  formAStatus,
  parseFormAVersion,
  presentFormAJob,
  presentFormAWebhook,
} from './form-a.presenter.ts'
import { parseInclude, presentFormBJob, presentFormBWebhook } from './form-b.presenter.ts'
import { presentPipeline } from './pipeline.presenter.ts'
import {
  type Bindings,
  type CandidateWebhook,
  FORM_A_EVENTS,
  FORM_B_EVENTS,
  formARecipients,
  formBRecipients,
  type Recipient,
  type StoredEvent,
} from './webhook-events.ts'
import { buildFormAPayload, buildFormBPayload } from './webhook-payloads.ts'
import { parseFormAWebhook, parseFormBWebhook } from './webhook-requests.ts'

export type ApiForm = 'A' | 'B'
export const API_FORMS: readonly ApiForm[] = ['A', 'B']

/** The retry settings of the dispatcher; each form's policy reads its own part. */
export type RetrySettings = {
  /** Form A: the wait doubles from `baseMs`, at most `maxAttempts`, none later than `giveUpMs` after the first. */
  doubling: { baseMs: number; maxAttempts: number; giveUpMs: number }
  /** Form B: one wait per retry; the schedule spent means the delivery has failed for good. */
  schedule: readonly number[]
}

export type DeliveryContext = { deliveryId: string; type: string; event: StoredEvent; job: JobView | null }

/**
 * Everything that differs between the two API forms, in one object per form. Code outside packages/forms looks the
 * profile up once per request or delivery (`formProfile(workspace.apiForm)`) and asks it; it never compares forms.
 */
export type FormProfile = {
  form: ApiForm
  // ---- requests ----
  /** The scope that creates and changes webhooks (`webhook:write` / `webhooks:write`). */
  webhookWriteScope: Scope
  /** A webhook creation body, validated, as the domain's NewWebhook. */
  parseWebhook(body: unknown): NewWebhook
  /** Wire event names a webhook may subscribe to. */
  webhookEvents: readonly string[]
  /** A pipeline version as the client writes it (path or parameter) → its number, or null. */
  parseVersion(raw: string): number | null
  /** The file types the form takes at all; a pipeline's `accept.types` narrows them further. */
  uploadTypes: readonly FileType[]
  /** Job statuses as the form shows them, the values its job list's `status` filter takes. */
  jobStatuses: readonly [string, ...string[]]
  /** The internal statuses a `status` filter of the form's values selects. */
  internalJobStatuses(statuses: readonly string[]): JobStatus[]
  // ---- responses ----
  presentJob(job: JobView, opts: { include?: string }): unknown
  presentWebhook(w: WebhookView, opts: { revealSecret: boolean }): unknown
  presentPipeline(p: PipelineView): unknown
  /** A version number as the form shows it. */
  presentVersion(n: number): string | number
  /** A stage name as the form shows it. */
  presentStage(stage: string): string
  // ---- lifecycle ----
  /** Whether a job waits (`awaiting_review`) while one of its documents is parked for review. */
  jobWaitsForReview: boolean
  // ---- webhooks ----
  recipients(event: StoredEvent, bindings: Bindings, webhooks: CandidateWebhook[]): Recipient[]
  buildPayload(ctx: DeliveryContext & { webhookId: string; baseUrl: string }): unknown
  /** Headers that authenticate one attempt of a stored body; `nowSeconds` matters only where the form signs time. */
  signatureHeaders(secret: string, body: string, nowSeconds: number): Record<string, string>
  /** Wait before the next attempt after `attemptsMade` failed ones, or null: the delivery is abandoned. */
  nextRetryDelayMs(
    opts: { attemptsMade: number; firstAttemptAt: Date; now: Date },
    settings: RetrySettings,
  ): number | null
  /** What an abandoned delivery does to its webhook: nothing, or mark it `failing` and notify the admins. */
  onAbandon: 'keep' | 'mark-failing'
}

const FORM_A: FormProfile = {
  form: 'A',
  webhookWriteScope: 'webhook:write',
  parseWebhook: parseFormAWebhook,
  webhookEvents: FORM_A_EVENTS,
  parseVersion: parseFormAVersion,
  uploadTypes: FORM_A_UPLOAD_TYPES,
  jobStatuses: FORM_A_STATUSES,
  internalJobStatuses: (statuses) => JOB_STATUSES.filter((s) => statuses.includes(formAStatus(s))),
  presentJob: (job) => presentFormAJob(job),
  presentWebhook: presentFormAWebhook,
  presentPipeline: (p) => presentPipeline(p, 'A'),
  presentVersion: (n) => `v${n}`,
  presentStage: formAStageName,
  jobWaitsForReview: false,
  recipients: formARecipients,
  buildPayload: (c) => buildFormAPayload(c),
  signatureHeaders: (secret, body) => ({ [SIGNATURE_HEADER]: signFormA(secret, body) }),
  nextRetryDelayMs: (o, settings) => {
    const decision = formAShouldRetry({ ...o, ...settings.doubling })
    return decision.retry ? decision.delayMs : null
  },
  onAbandon: 'keep',
}

const FORM_B: FormProfile = {
  form: 'B',
  webhookWriteScope: 'webhooks:write',
  parseWebhook: parseFormBWebhook,
  webhookEvents: FORM_B_EVENTS,
  // Form B sends plain integers; a `v` prefix is tolerated in paths as Form A writes it.
  parseVersion: parseFormAVersion,
  uploadTypes: FILE_TYPES,
  jobStatuses: JOB_STATUSES,
  internalJobStatuses: (statuses) => JOB_STATUSES.filter((s) => statuses.includes(s)),
  presentJob: (job, opts) => presentFormBJob(job, parseInclude(opts.include)),
  presentWebhook: presentFormBWebhook,
  presentPipeline: (p) => presentPipeline(p, 'B'),
  presentVersion: (n) => n,
  presentStage: (stage) => stage,
  jobWaitsForReview: true,
  recipients: (event, _bindings, webhooks) => formBRecipients(event, webhooks),
  buildPayload: (c) => buildFormBPayload(c),
  signatureHeaders: (secret, body, nowSeconds) => ({
    [TIMESTAMP_HEADER]: String(nowSeconds),
    [SIGNATURE_HEADER]: signFormB(secret, nowSeconds, body),
  }),
  nextRetryDelayMs: (o, settings) => formBRetryDelayMs(o.attemptsMade, settings.schedule),
  onAbandon: 'mark-failing',
}

const PROFILES: Record<ApiForm, FormProfile> = { A: FORM_A, B: FORM_B }

/** The profile of a workspace's API form: the one lookup by form name. */
export function formProfile(form: ApiForm): FormProfile {
  return PROFILES[form]
}
