import { API_FORMS, CursorPage, ExtractedData, Timestamp } from '@quire/forms'
import { z } from 'zod'

/**
 * Response schemas of the endpoints whose bodies come straight from a use-case rather than a form presenter
 * (documents, credits, deliveries, admin). The black-box test validates real responses against them.
 */

export const Document = z
  .object({
    id: z.string(),
    status: z.string().describe('Lifecycle status, e.g. `processing`, `completed`, `in_review`, `split`.'),
    job_id: z.string(),
    parent_id: z.string().nullable().describe('The document this one was split from.'),
    children: z.array(z.string()).describe('Documents split from this one.'),
    type: z.string().nullable(),
    schema_id: z.string().nullable(),
    pages: z.array(z.number().int().min(1)),
    metadata: z.record(z.string(), z.unknown()),
    data: ExtractedData,
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .describe('Why the document failed; present only when its status is `failed`.'),
    events: z
      .array(z.object({ type: z.string(), data: z.unknown(), at: Timestamp }))
      .describe('Event history, oldest first.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .describe('A document with its lineage, event history and extracted data.')

export const DocumentListItem = z
  .object({
    id: z.string(),
    status: z.string(),
    job_id: z.string(),
    pipeline_id: z.string().describe("The pipeline of the document's job."),
    parent_id: z.string().nullable(),
    type: z.string().nullable(),
    schema_id: z.string().nullable(),
    pages: z.array(z.number().int().min(1)),
    review_problems: z
      .array(z.string())
      .describe('Why the document was parked for review (`<field>: <reason>`), as the last check found them.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .describe('A document as a list shows it (without its data and history: read the document for those).')

export const Balance = z
  .object({
    available: z.number().int(),
    reserved: z.number().int().describe('Held by running jobs; settles to the amount used.'),
    spent: z.number().int(),
    spending_cap: z.number().int().nullable(),
  })
  .describe('Credit balance. `available + reserved + spent` changes only by grants.')

export const Delivery = z
  .object({
    id: z.string().describe('Delivery id, as sent to the receiver; stable across retries.'),
    event: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'abandoned']),
    attempt_count: z.number().int().min(0).describe('Attempts made so far.'),
    next_retry_at: Timestamp.nullable().describe('When the next attempt is due; null once the delivery is settled.'),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    attempts: z
      .array(
        z.object({
          attempt: z.number().int().min(1),
          status: z.enum(['succeeded', 'failed']).describe('`succeeded` on a 2xx answer.'),
          response_code: z.number().int().nullable().describe('null when no answer came (timeout, refused).'),
          error: z.string().nullable(),
          duration_ms: z.number().int().min(0),
          at: Timestamp,
        }),
      )
      .describe('Every attempt, first first.'),
  })
  .describe('One webhook delivery and its attempts.')

export const DeliveryList = z.object({ data: z.array(Delivery).describe('Newest first.'), page: CursorPage })

export const Workspace = z
  .object({
    id: z.string(),
    name: z.string(),
    api_form: z.enum(API_FORMS),
    spending_cap: z.number().int().nullable(),
    default_pipeline_id: z.string().nullable(),
    credits: z.object({ available: z.number().int(), reserved: z.number().int(), spent: z.number().int() }),
    created_at: Timestamp,
  })
  .describe('A workspace (admin API).')

export const CreatedApiKey = z
  .object({
    id: z.string(),
    key: z.string().describe('The API key; shown once, stored hashed.'),
    scopes: z.array(z.string()),
    pipeline_id: z.string().nullable().describe('The pipeline the key is bound to.'),
  })
  .describe('A newly issued API key (admin API).')

export const RevokedApiKey = z
  .object({ id: z.string(), revoked_at: z.string().describe('When the key was revoked (RFC 3339).') })
  .describe('A revoked API key (admin API): refused from the next request on.')

export const ErrorGroup = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    pipeline_id: z.string(),
    stage: z.string().describe('The stage the jobs are blocked in.'),
    error_code: z.string().describe('e.g. `destination_unavailable`, `blob_storage_unavailable`, `ocr_unavailable`.'),
    status: z
      .enum(['open', 'escalated', 'resolved'])
      .describe('`open`: retried automatically; `escalated`: retries ran out, an operator must act; `resolved`.'),
    last_error: z.string(),
    jobs: z.object({
      blocked: z.number().int().min(0).describe('Jobs blocked now.'),
      in_group: z.number().int().min(0).describe('Jobs in the group now (blocked, or re-running their stage).'),
      total: z.number().int().min(0).describe('Jobs that ever joined the group.'),
    }),
    retries: z.object({ done: z.number().int().min(0), next_at: Timestamp.nullable() }),
    reruns: z.number().int().min(0).describe('Operator re-runs so far.'),
    opened_at: Timestamp,
    escalated_at: Timestamp.nullable(),
    resolved_at: Timestamp.nullable(),
  })
  .describe('Blocked jobs sharing one (workspace, pipeline, stage, error code).')

export const ErrorGroupList = z.object({ data: z.array(ErrorGroup) })

export const ErrorGroupRerun = z.object({
  requeued: z.number().int().min(0).describe('Blocked jobs queued to run their blocked stage again.'),
  group: ErrorGroup,
})

export const NotificationList = z.object({
  data: z.array(
    z.object({ id: z.string(), kind: z.string(), message: z.string(), data: z.unknown(), created_at: Timestamp }),
  ),
})

const LedgerAccount = z.enum(['issuance', 'available', 'reserved', 'spent'])

export const LedgerEntry = z
  .object({
    id: z.string(),
    job_id: z.string().nullable(),
    kind: z.enum(['grant', 'reserve', 'settle', 'release', 'void', 'expire']),
    amount: z.number().int(),
    debit_account: LedgerAccount.describe('The account the amount left (double entry).'),
    credit_account: LedgerAccount.describe('The account the amount entered.'),
    created_at: Timestamp,
  })
  .describe('One credit ledger entry.')

export const LedgerEntryList = z.object({ data: z.array(LedgerEntry).describe('Newest first.'), page: CursorPage })
