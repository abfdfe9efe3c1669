import { z } from 'zod'
import { Timestamp, WebhookStatus } from './shared.schemas.ts'

/** Response schemas of Form A: exactly what `form-a.presenter.ts` returns. */

export const FormAJobStatus = z.enum(['processing', 'completed', 'failed', 'cancelled'])

const PipelineRef = z.object({
  id: z.string(),
  version: z
    .string()
    .regex(/^v\d+$/)
    .describe('Pipeline version as "v<n>".'),
})

/** 202 body of `POST /v1/jobs`: one object for the whole batch. */
export const FormAJobCreated = z
  .object({
    id: z.string().describe('Job id.'),
    status: FormAJobStatus,
    stage_now: z.string().describe('Current stage; `init` on creation.'),
    pipeline: PipelineRef,
    documents: z.number().int().min(0).describe('Number of documents (uploaded files) in the job.'),
    source_tag: z.string().optional(),
    created_at: Timestamp,
  })
  .describe('A job as returned on submission (Form A).')

/** `GET /v1/jobs/{job_id}`, list items and cancel. */
export const FormAJob = z
  .object({
    id: z.string().describe('Job id.'),
    status: FormAJobStatus,
    stage_now: z.string().optional().describe('Present while `processing`.'),
    pipeline: PipelineRef,
    documents: z.array(
      z.object({
        id: z.string(),
        status: z.string().describe('Document status, e.g. `completed`, `in_review`, `failed`.'),
        error: z.string().optional().describe('Why the document failed; present when its status is `failed`.'),
      }),
    ),
    source_tag: z.string().optional(),
    metadata: z.record(z.string(), z.string()).optional().describe('Echo of the submitted metadata.'),
    run_kind: z.enum(['prod', 'test']),
    created_at: Timestamp,
    completed_at: Timestamp.optional(),
    machine_seconds: z.number().int().min(0),
    trace: z.array(
      z.object({
        stage: z.string().describe('Form A stage name: `init`, `parse`, `splitclassify`, `extract`, `validate`, …'),
        ms: z.number().int().min(0),
        ok: z.boolean(),
      }),
    ),
    failed_stage: z
      .string()
      .optional()
      .describe('Present when `failed`: the pipeline stage that failed (`initialization`, `parse`, `extract`, ...).'),
    error: z.string().optional().describe('Error message; present when `failed`.'),
  })
  .describe('A job (Form A).')

const FormAWebhookAuth = z.union([
  z.object({ header_name: z.string(), api_key: z.literal('***') }),
  z.object({ username: z.string(), password: z.literal('***') }),
])

/** A webhook; `hmac_secret` is the real secret on create and rotate, `***` on every other read. */
export const FormAWebhook = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    auth_type: z.enum(['NONE', 'API_KEY', 'BASIC']),
    auth: FormAWebhookAuth.optional().describe('Credentials, masked.'),
    events: z.array(z.string()),
    headers: z.record(z.string(), z.string()),
    description: z.string().optional(),
    status: WebhookStatus,
    hmac_secret: z.string().describe('Signing secret: returned once on create and rotate; `***` afterwards.'),
    created_at: Timestamp,
  })
  .describe('A webhook (Form A).')
