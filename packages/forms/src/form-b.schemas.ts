import { JOB_STATUSES } from '@quire/domain'
import { z } from 'zod'
import { ExtractedData, Timestamp, WebhookStatus } from './shared.schemas.ts'

/** Response schemas of Form B: exactly what `form-b.presenter.ts` returns. */

export const FormBJobStatus = z.enum(JOB_STATUSES)

export const FormBStage = z.object({
  stage: z
    .string()
    .describe(
      'Stage name: `initialization`, `parse`, `split_classify`, `extract`, `validate`, `post_processing`, `destination`.',
    ),
  status: z.enum(['running', 'completed', 'failed', 'skipped']),
  started_at: Timestamp,
  completed_at: Timestamp.nullable(),
  ms: z.number().int().min(0).nullable(),
  credits: z.number().int().min(0),
  attempts: z
    .number()
    .int()
    .min(0)
    .describe('How many times the stage was started; above 1 after a retry (for example a crashed worker).'),
  error: z.string().optional().describe('What failed in this stage (a document that could not be read, ...).'),
})

export const FormBResultDocument = z.object({
  id: z.string(),
  type: z.string().nullable().describe('Document type from classification.'),
  schema_id: z.string().nullable(),
  pages: z.array(z.number().int().min(1)),
  data: ExtractedData,
  status: z.literal('failed').optional().describe('Present on a document that failed (`completed_with_errors`).'),
  error: z.object({ code: z.string(), message: z.string() }).optional().describe('Why the document failed.'),
})

/** `GET /v1/jobs/{job_id}`, list items, cancel, and finished entries of a sync submission. */
export const FormBJob = z
  .object({
    job_id: z.string(),
    status: FormBJobStatus,
    stage_now: z.string().optional().describe('While the job is not final: the stage it is in or waits in.'),
    api_type: z.enum(['parse', 'extract']),
    execution_mode: z.enum(['async', 'sync']),
    priority: z.enum(['standard', 'high']),
    environment: z.enum(['production', 'test']),
    pipeline_id: z.string(),
    pipeline_version: z.number().int().min(1),
    input: z.object({ file_name: z.string(), mime_type: z.string(), page_count: z.number().int().min(0) }),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    total_time_taken_ms: z.number().int().min(0),
    client_reference_id: z.string().optional().describe('Present when sent.'),
    degradation_reason: z.literal('sync_budget_exceeded').optional(),
    error: z
      .object({ code: z.string(), message: z.string(), stage: z.string() })
      .optional()
      .describe('On `failed`, `timed_out` and `completed_with_errors` (the first failing stage).'),
    review: z
      .object({
        documents: z.array(z.object({ id: z.string(), status: z.enum(['in_review', 'escalated']) })),
      })
      .optional()
      .describe(
        'On `awaiting_review` and `partial`: the documents waiting for a decision (`POST /v1/documents/{id}/review`).',
      ),
    stages: z.array(FormBStage).optional().describe('Only with `include=stages`.'),
    result: z
      .object({ documents: z.array(FormBResultDocument) })
      .optional()
      .describe('Only with `include=result` and when `status` is `completed`.'),
  })
  .describe('A job (Form B).')

/** One entry of a Form B submit response for a job that runs on (async, or sync past the window). */
export const FormBJobSubmitted = z
  .object({
    job_id: z.string(),
    status: z.enum(['queued', 'processing']),
    execution_mode: z.enum(['async', 'sync']),
    status_url: z.url().describe('Absolute URL of the job.'),
    result_url: z.url().describe('`status_url` with `include=result`.'),
    degradation_reason: z
      .literal('sync_budget_exceeded')
      .optional()
      .describe('Set when `mode=sync` ran past the sync window.'),
    submitted_at: Timestamp,
    client_reference_id: z.string().optional().describe('Present when sent.'),
  })
  .describe('An accepted job (Form B submit response entry).')

/** A webhook as read back: the secret is never shown again. */
export const FormBWebhook = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    events: z.array(z.string()).describe('Event ids, or `["*"]` for all.'),
    auth: z.enum(['none', 'basic', 'apikey']),
    apikey: z.object({ location: z.string(), name: z.string(), key: z.literal('***') }).optional(),
    basic: z.object({ username: z.string(), password: z.literal('***') }).optional(),
    status: WebhookStatus,
    created_at: Timestamp,
  })
  .describe('A webhook (Form B).')

/** Create and rotate responses: the signing secret, returned once. */
export const FormBWebhookWithSecret = FormBWebhook.extend({
  secret: z.string().describe('Signing secret; returned once.'),
}).describe('A webhook with its signing secret (Form B create and rotate).')
