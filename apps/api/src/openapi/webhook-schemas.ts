import { FORM_A_EVENTS, FORM_B_EVENTS } from '@quire/forms'
import { z } from 'zod'

/**
 * The bodies Quire POSTs to a webhook's url, one shape per form (spec, Webhook events), for the OpenAPI document's
 * `webhooks` section. Built by @quire/forms' buildFormAPayload and buildFormBPayload; build-openapi.test.ts validates
 * what they build against these.
 */
export const FormAWebhookPayload = z
  .object({
    id: z.string().describe('Delivery id, equal to header `X-Service-Delivery-Id`; use to deduplicate.'),
    type: z.enum(FORM_A_EVENTS as [string, ...string[]]).describe('Event type.'),
    timestamp: z.number().int().describe('Unix epoch seconds UTC.'),
    job_id: z.string().optional().describe('The job the event is about.'),
    document_id: z.string().optional().describe('On per-document stage events.'),
    stage: z.string().optional().describe('On stage events.'),
    transition: z.enum(['entered', 'exited']).optional().describe('On stage events.'),
    result_url: z.string().optional().describe('On `*.exited` events once output exists.'),
    data: z
      .record(z.string(), z.unknown())
      .describe(
        'On `*.exited` events `data.job` is a snapshot of the job in the GET job shape without `result`, with ' +
          '`job_id`, `execution_mode` and `priority`; otherwise empty.',
      ),
  })
  .strict()
  .describe(
    'A Form A delivery. Headers: `X-Service-Signature: sha256=<lowercase hex HMAC-SHA256 of the raw body>`, ' +
      '`X-Service-Delivery-Id`, `User-Agent: Service-Webhook/1.0`, plus the webhook’s credential and static headers.',
  )

export const FormBWebhookPayload = z
  .object({
    event: z.enum(FORM_B_EVENTS as [string, ...string[]]).describe('Event id.'),
    delivery_id: z.string().describe('Stable across retries, for deduplication.'),
    occurred_at: z.string().describe('RFC 3339.'),
    workspace_id: z.string(),
    webhook_id: z.string(),
    data: z.record(z.string(), z.unknown()).describe('The event’s own fields (e.g. `job_id`, `status`).'),
  })
  .strict()
  .describe(
    'A Form B delivery. Headers: `X-Service-Signature: v1=<hex HMAC-SHA256("<X-Service-Timestamp>.<raw body>")>`, ' +
      '`X-Service-Timestamp`, plus the webhook’s credential and static headers.',
  )
