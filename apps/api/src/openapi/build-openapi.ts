import { PipelineDefinition, type DomainErrorCode } from '@quire/domain'
import {
  CursorPage,
  FormAJob,
  FormAJobCreated,
  FormAWebhook,
  FormBJob,
  FormBJobSubmitted,
  FormBWebhook,
  FormBWebhookWithSecret,
  NumberedPage,
  PipelineSchemas,
} from '@quire/forms'
import { z } from 'zod'
import { PageQuery } from '../http/validate.ts'
import { CreateKey, CreateWorkspace, Grant, PatchWorkspace } from '../routes/admin/admin.routes.ts'
import { ListQuery } from '../routes/jobs/jobs.routes.ts'
import { ReviewDocumentRequest } from '../routes/documents/review-document.route.ts'
import { LedgerQuery } from '../routes/misc/credits-documents.routes.ts'
import { FormASubmitFields } from '../routes/jobs/submit-form-a.ts'
import { FormASubmitJson } from '../routes/jobs/submit-form-a-json.ts'
import { FormBSubmitFields } from '../routes/jobs/submit-form-b.ts'
import { CreatePipeline, CreateVersion } from '../routes/pipelines/pipelines.routes.ts'
import { FormACreateWebhook, FormBCreateWebhook } from '../routes/webhooks/webhook-requests.ts'
import { DeliveriesQuery, PatchWebhook } from '../routes/webhooks/webhooks.routes.ts'
import { ERROR_DESCRIPTIONS, errorInfo, FlatError, NestedError } from './error-schemas.ts'
import { Balance, CreatedApiKey, DeliveryList, Document, LedgerEntryList, NotificationList, Workspace } from './resource-schemas.ts'

/**
 * The OpenAPI 3.1 document of one API form, generated from the zod schemas that validate requests (apps/api routes)
 * and the zod schemas that describe presenter output (packages/forms). Nothing here restates a shape: operations name
 * schemas, `z.toJSONSchema` (draft 2020-12, the dialect of OpenAPI 3.1) writes them, and error responses are read
 * from the error table in http/errors.ts. Only prose (summaries, parameter descriptions) is written here.
 */

export type ApiForm = 'A' | 'B'
type Json = Record<string, unknown>

/** `GET /v1/openapi.json` and `/docs`: `?form=A|B`; without it the API key decides. */
export const OpenApiQuery = z.object({
  form: z.enum(['A', 'B']).optional().describe('API form of the document; defaults to the form of the calling key.'),
})

/** Form B `include` on job reads (parsed leniently by `parseInclude`: unknown entries are ignored). */
const IncludeQuery = z.object({
  include: z.string().optional().describe('Comma-separated: `stages`, `result` (for example `stages,result`).'),
})

type Body = { kind: 'json' | 'multipart'; name: string; schema: z.ZodType }
type Reply = { description: string; name?: string; schema?: z.ZodType; json?: Json; html?: boolean }
type Security = 'key' | 'admin' | 'optional-key' | 'none'

type Operation = {
  method: 'get' | 'post' | 'patch'
  path: string
  operationId: string
  tag: string
  summary: string
  description?: string
  security: Security
  /** Any one of these scopes suffices. */
  scopes?: string[]
  pathParams?: Record<string, string>
  /** Query parameters, with descriptions of those the schema does not describe itself. */
  query?: { schema: z.ZodObject; docs?: Record<string, string> }
  /** Request body; several entries are alternative content types. */
  body?: Body | Body[]
  responses: Record<string, Reply>
  errors?: DomainErrorCode[]
}

const KEY_ERRORS: DomainErrorCode[] = ['unauthorized', 'insufficient_scope']
const JSON_BODY_ERRORS: DomainErrorCode[] = ['INVALID_PARAMETER', 'MALFORMED_REQUEST']
const PAGE_LIST = 'Page-numbered: `page` ≥ 1 (default 1), `page_size` 1..100 (default 25).'

/** Descriptions of request properties, by component name; every entry must name a real property (tested). */
const PROPERTY_DOCS: Record<ApiForm, Record<string, Record<string, string>>> = {
  A: {
    SubmitJobRequest: {
      pipeline_id: 'Id of a published pipeline; an unpublished one is rejected (400 PIPELINE_NOT_PUBLISHED).',
      version: 'Pin a pipeline version, `v<n>`. Default: latest published.',
      source_tag: 'Stamped on the job; filter the job list by it.',
      metadata: 'A JSON object of up to 20 string values, echoed on every resulting document.',
      run_kind: '`prod` (default) or `test`. Test runs never deliver to destinations; credits are consumed alike.',
      file: 'The file(s): PDF, TIFF, PNG, JPEG or DOCX (type decided by content). Repeat the part for a batch: all parts form one job.',
    },
    CreateWebhookRequest: {
      name: 'Label, unique within the workspace (409 WEBHOOK_NAME_CONFLICT).',
      url: 'HTTPS endpoint; private, loopback and link-local addresses are rejected.',
      auth_type: 'How the service authenticates to the receiver.',
      auth: 'For `API_KEY`: `api_key` and `header_name` (default `X-API-Key`). For `BASIC`: `username`, `password`.',
      events: 'Job events to receive in addition to stage bindings.',
      headers: 'Static headers sent with every delivery; names starting with `X-Service-` are reserved.',
      description: 'Free text.',
    },
  },
  B: {
    SubmitJobRequest: {
      files: 'The file(s): PDF, DOCX, PNG, JPEG, TIFF, BMP, GIF or WebP, up to 100 MB each. Repeat the part: each file becomes its own job, in upload order.',
      pipeline_id: 'Pipeline to run; wins over the key’s bound pipeline, then the workspace default, then `parse`.',
      pipeline_version: 'A specific version, draft or published. Default: latest published.',
      schema_id: 'Extraction schema; when omitted the pipeline’s catch-all routing rule decides.',
      priority: '`standard` (default) or `high`.',
      client_reference_id: 'Stored and echoed for correlation; not used for duplicate detection.',
      environment: '`production` (default) or `test`.',
      mode: '`async` (default) or `sync`; any other value is treated as `async`.',
    },
    CreateWebhookRequest: {
      name: 'Human label, unique within the workspace (409 WEBHOOK_NAME_CONFLICT).',
      url: 'HTTPS endpoint; non-TLS, private, loopback and link-local addresses are rejected.',
      events: 'Event ids, or `["*"]` for all. Default: all.',
      auth: 'How the service authenticates to the receiver; add the matching `apikey` or `basic` block.',
      apikey: 'For `auth: apikey`: `location` (header), header `name`, `key`.',
      basic: 'For `auth: basic`: `username`, `password`.',
      headers: 'Static headers sent with every delivery; names starting with `X-Service-` are reserved.',
      description: 'Free text.',
    },
  },
}

const LIST_JOBS_DOCS: Record<string, string> = {
  limit: 'Page size, 1..100.',
  cursor: '`page.next_cursor` of the previous page; omit for the first page.',
  status: 'Comma-separated job statuses (the internal names of Form B; Form A collapses them on output).',
  pipeline_id: 'Only jobs of this pipeline.',
  source_tag: 'Only jobs stamped with this source tag.',
  environment: 'Only `production` or only `test` jobs.',
  created_after: 'Only jobs created at or after this RFC 3339 time.',
  created_before: 'Only jobs created before this RFC 3339 time.',
}
const PAGE_DOCS: Record<string, string> = { page: 'Page number, from 1.', page_size: 'Items per page, 1..100.' }

/** The text parameters of a submission (which Form B also takes in the query string). */
const textFields = (docs: Record<string, string>) => Object.fromEntries(Object.entries(docs).filter(([k]) => k !== 'files'))

function operations(form: ApiForm): Operation[] {
  const A = form === 'A'
  const webhookWrite = A ? 'webhook:write' : 'webhooks:write'
  const webhookRead = ['webhooks:read', webhookWrite]
  const Job = A ? FormAJob : FormBJob
  const { Pipeline, PipelineVersionCreated } = PipelineSchemas[form]
  const Webhook = A ? FormAWebhook : FormBWebhook
  const WebhookWithSecret = A ? FormAWebhook : FormBWebhookWithSecret
  const jobId = { job_id: 'Job id.' }
  const id = (what: string) => ({ id: `${what} id.` })
  const submitErrors: DomainErrorCode[] = [
    ...JSON_BODY_ERRORS,
    ...(A ? (['INVALID_METADATA'] as const) : (['MISSING_FILE'] as const)),
    'MISSING_PART',
    'PIPELINE_NOT_PUBLISHED',
    'PIPELINE_NOT_FOUND',
    'VERSION_NOT_FOUND',
    'PAYMENT_REQUIRED',
    'FILE_TOO_LARGE',
    'PIPELINE_FILE_TOO_LARGE',
    'UNSUPPORTED_FILE_TYPE',
    'UNSUPPORTED_MEDIA_TYPE',
    'UNKNOWN_PARAMETER',
    'TOO_MANY_FILES',
    'TOO_MANY_FIELDS',
    'FIELDS_TOO_LARGE',
    ...(A ? (['UNKNOWN_BUCKET', 'OBJECT_NOT_FOUND', 'BUCKET_UNAVAILABLE'] as const) : []),
  ]

  const submit: Operation = A
    ? {
        method: 'post',
        path: '/v1/jobs',
        operationId: 'submitJob',
        tag: 'Jobs',
        summary: 'Submit files as one job',
        description:
          'All `file` parts form one job (a batch). Instead of uploading, `application/json` references objects in buckets the operator connected (`files: [{bucket, key}]`). Credits are reserved at submission (pages × `credits.per_page`); too few gives 402 and no job. Not idempotent: sending the same file twice creates two jobs.',
        security: 'key',
        scopes: ['jobs:write'],
        body: [
          { kind: 'multipart', name: 'SubmitJobRequest', schema: FormASubmitFields.extend({ file: z.array(z.file()).min(1) }) },
          { kind: 'json', name: 'SubmitJobJsonRequest', schema: FormASubmitJson },
        ],
        responses: { '202': { description: 'Accepted; the job runs asynchronously.', name: 'JobCreated', schema: FormAJobCreated } },
        errors: submitErrors,
      }
    : {
        method: 'post',
        path: '/v1/jobs',
        operationId: 'submitJobs',
        tag: 'Jobs',
        summary: 'Submit files, one job per file',
        description:
          'Each `files` part becomes its own job, created in upload order; if a later file is rejected, jobs already created for earlier files stand and the response is the error. Text parameters may also be sent in the query string. Credits are reserved at submission; too few (or over the spending cap) gives 402. Not idempotent.',
        security: 'key',
        scopes: ['jobs:write'],
        query: { schema: FormBSubmitFields, docs: textFields(PROPERTY_DOCS.B.SubmitJobRequest!) },
        body: {
          kind: 'multipart',
          name: 'SubmitJobRequest',
          schema: FormBSubmitFields.extend({ files: z.array(z.file()).min(1) }),
        },
        responses: {
          '200': {
            description: '`mode=sync` and every job finished inside the sync window: full jobs (as with `include=stages,result`).',
            name: 'SubmitCompleted',
            schema: z.array(FormBJob),
          },
          '202': {
            description:
              'Async: one accepted job per file, in upload order. Sync past the window: finished jobs, and accepted jobs with `degradation_reason: sync_budget_exceeded`.',
            name: 'SubmitAccepted',
            schema: z.array(z.union([FormBJobSubmitted, FormBJob])),
          },
        },
        errors: submitErrors,
      }

  return [
    submit,
    {
      method: 'get',
      path: '/v1/jobs',
      operationId: 'listJobs',
      tag: 'Jobs',
      summary: 'List jobs',
      description: 'Newest first, cursor-paginated (keyset on creation time and id: no duplicates or gaps while jobs are added).',
      security: 'key',
      scopes: ['jobs:read'],
      query: { schema: ListQuery, docs: LIST_JOBS_DOCS },
      responses: {
        '200': { description: 'One page of jobs.', name: 'JobList', schema: z.object({ data: z.array(Job), page: CursorPage }) },
      },
      errors: ['INVALID_PARAMETER'],
    },
    {
      method: 'get',
      path: '/v1/jobs/{job_id}',
      operationId: 'getJob',
      tag: 'Jobs',
      summary: 'Read a job',
      description: A
        ? 'Status, trace, documents and machine seconds.'
        : 'Status and input; per-stage progress with `include=stages`, the output with `include=result` once `completed`.',
      security: 'key',
      scopes: ['jobs:read'],
      pathParams: jobId,
      ...(A ? {} : { query: { schema: IncludeQuery } }),
      responses: { '200': { description: 'The job.', name: 'Job', schema: Job } },
      errors: ['job_not_found', 'job_expired'],
    },
    {
      method: 'post',
      path: '/v1/jobs/{job_id}/cancel',
      operationId: 'cancelJob',
      tag: 'Jobs',
      summary: 'Cancel a job',
      description: 'Cancels a job that has not finished; the credit hold is released. A finished job gives 409 JOB_NOT_CANCELLABLE.',
      security: 'key',
      scopes: ['jobs:cancel'],
      pathParams: jobId,
      responses: { '200': { description: 'The cancelled job.', name: 'Job', schema: Job } },
      errors: ['job_not_found', 'job_expired', 'JOB_NOT_CANCELLABLE'],
    },
    {
      method: 'post',
      path: '/v1/pipelines',
      operationId: 'createPipeline',
      tag: 'Pipelines',
      summary: 'Create a pipeline',
      description: 'Creates the pipeline with version 1 as a draft; publish it before Form A submissions can use it.',
      security: 'key',
      scopes: ['pipelines:write'],
      body: { kind: 'json', name: 'CreatePipelineRequest', schema: CreatePipeline.extend({ definition: PipelineDefinition.optional() }) },
      responses: { '201': { description: 'Created.', name: 'Pipeline', schema: Pipeline } },
      errors: [...JSON_BODY_ERRORS, 'INVALID_DEFINITION'],
    },
    {
      method: 'get',
      path: '/v1/pipelines',
      operationId: 'listPipelines',
      tag: 'Pipelines',
      summary: 'List pipelines',
      description: `The workspace’s pipelines and the platform ones. ${PAGE_LIST}`,
      security: 'key',
      scopes: ['pipelines:read'],
      query: { schema: PageQuery, docs: PAGE_DOCS },
      responses: {
        '200': { description: 'One page.', name: 'PipelineList', schema: z.object({ data: z.array(Pipeline), page: NumberedPage }) },
      },
      errors: ['INVALID_PARAMETER'],
    },
    {
      method: 'get',
      path: '/v1/pipelines/{id}',
      operationId: 'getPipeline',
      tag: 'Pipelines',
      summary: 'Read a pipeline',
      security: 'key',
      scopes: ['pipelines:read'],
      pathParams: id('Pipeline'),
      responses: { '200': { description: 'The pipeline.', name: 'Pipeline', schema: Pipeline } },
      errors: ['PIPELINE_NOT_FOUND'],
    },
    {
      method: 'post',
      path: '/v1/pipelines/{id}/versions',
      operationId: 'createPipelineVersion',
      tag: 'Pipelines',
      summary: 'Add a version',
      description: 'Adds the next version as a draft. Platform pipelines cannot be changed.',
      security: 'key',
      scopes: ['pipelines:write'],
      pathParams: id('Pipeline'),
      body: { kind: 'json', name: 'CreatePipelineVersionRequest', schema: CreateVersion.extend({ definition: PipelineDefinition.optional() }) },
      responses: { '201': { description: 'Created.', name: 'PipelineVersionCreated', schema: PipelineVersionCreated } },
      errors: [...JSON_BODY_ERRORS, 'INVALID_DEFINITION', 'PIPELINE_NOT_FOUND', 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/pipelines/{id}/versions/{n}/publish',
      operationId: 'publishPipelineVersion',
      tag: 'Pipelines',
      summary: 'Publish a version',
      description: A ? 'Makes the version the latest published one.' : 'Makes the version the latest published one; emits `pipeline.deployed`.',
      security: 'key',
      scopes: ['pipelines:write'],
      pathParams: { ...id('Pipeline'), n: A ? 'Version, `v<n>` (or `n`).' : 'Version number.' },
      responses: { '200': { description: 'The pipeline.', name: 'Pipeline', schema: Pipeline } },
      errors: ['PIPELINE_NOT_FOUND', 'VERSION_NOT_FOUND', 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      tag: 'Webhooks',
      summary: 'Create a webhook',
      description: A
        ? 'The response carries `hmac_secret`, the signing secret, once; it reads back as `***`.'
        : 'The response carries `secret`, the signing secret, once; it is never shown again.',
      security: 'key',
      scopes: [webhookWrite],
      body: { kind: 'json', name: 'CreateWebhookRequest', schema: A ? FormACreateWebhook : FormBCreateWebhook },
      responses: { '201': { description: 'Created, with the signing secret.', name: 'WebhookWithSecret', schema: WebhookWithSecret } },
      errors: [...JSON_BODY_ERRORS, 'INVALID_WEBHOOK_URL', 'RESERVED_HEADER', 'INVALID_EVENT', 'WEBHOOK_NAME_CONFLICT'],
    },
    {
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      tag: 'Webhooks',
      summary: 'List webhooks',
      description: PAGE_LIST,
      security: 'key',
      scopes: webhookRead,
      query: { schema: PageQuery, docs: PAGE_DOCS },
      responses: {
        '200': { description: 'One page.', name: 'WebhookList', schema: z.object({ data: z.array(Webhook), page: NumberedPage }) },
      },
      errors: ['INVALID_PARAMETER'],
    },
    {
      method: 'get',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      tag: 'Webhooks',
      summary: 'Read a webhook',
      security: 'key',
      scopes: webhookRead,
      pathParams: id('Webhook'),
      responses: { '200': { description: A ? 'The webhook; the secret reads `***`.' : 'The webhook, without its secret.', name: 'Webhook', schema: Webhook } },
      errors: ['not_found'],
    },
    {
      method: 'patch',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      tag: 'Webhooks',
      summary: 'Re-enable a webhook',
      description: '`{status: "active"}` re-enables a `failing` webhook.',
      security: 'key',
      scopes: [webhookWrite],
      pathParams: id('Webhook'),
      body: { kind: 'json', name: 'UpdateWebhookRequest', schema: PatchWebhook },
      responses: { '200': { description: 'The webhook.', name: 'Webhook', schema: Webhook } },
      errors: [...JSON_BODY_ERRORS, 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/webhooks/{id}/rotate',
      operationId: 'rotateWebhookSecret',
      tag: 'Webhooks',
      summary: 'Rotate the signing secret',
      description: 'Issues a new signing secret, returned once. No request body.',
      security: 'key',
      scopes: [webhookWrite],
      pathParams: id('Webhook'),
      responses: { '200': { description: 'The webhook with its new secret.', name: 'WebhookWithSecret', schema: WebhookWithSecret } },
      errors: ['not_found'],
    },
    {
      method: 'get',
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      tag: 'Webhooks',
      summary: 'List deliveries',
      description: 'Delivery attempts, newest first: status, response code, duration, next retry.',
      security: 'key',
      scopes: webhookRead,
      pathParams: id('Webhook'),
      query: { schema: DeliveriesQuery, docs: { limit: 'How many deliveries, 1..100.' } },
      responses: { '200': { description: 'Deliveries.', name: 'DeliveryList', schema: DeliveryList } },
      errors: ['INVALID_PARAMETER', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/documents/{id}',
      operationId: 'getDocument',
      tag: 'Documents',
      summary: 'Read a document',
      description: 'Lifecycle, lineage, event history and extracted data `{field: {value, confidence}}`.',
      security: 'key',
      scopes: ['documents:read'],
      pathParams: id('Document'),
      responses: { '200': { description: 'The document.', name: 'Document', schema: Document } },
      errors: ['not_found'],
    },
    {
      method: 'post',
      path: '/v1/documents/{id}/review',
      operationId: 'reviewDocument',
      tag: 'Documents',
      summary: 'Review a document',
      description:
        'Approve (optionally with corrected values, which get confidence 1), reject or escalate a document parked for review (`in_review` or `escalated`). Form B webhooks receive `review.approved`, `review.rejected` or `review.escalated`.',
      security: 'key',
      scopes: ['documents:review'],
      pathParams: id('Document'),
      body: { kind: 'json', name: 'ReviewDocumentRequest', schema: ReviewDocumentRequest },
      responses: { '200': { description: 'The document after the decision.', name: 'Document', schema: Document } },
      errors: ['not_found', 'DOCUMENT_NOT_IN_REVIEW', 'INVALID_PARAMETER', 'MALFORMED_REQUEST'],
    },
    {
      method: 'get',
      path: '/v1/credits',
      operationId: 'getCredits',
      tag: 'Credits',
      summary: 'Credit balance',
      security: 'key',
      scopes: ['credits:read'],
      responses: { '200': { description: 'The balance.', name: 'Balance', schema: Balance } },
    },
    {
      method: 'get',
      path: '/v1/credits/ledger',
      operationId: 'listLedgerEntries',
      tag: 'Credits',
      summary: 'Ledger entries',
      description: 'The workspace’s double-entry credit ledger, newest first, cursor-paginated like `GET /v1/jobs`.',
      security: 'key',
      scopes: ['credits:read'],
      query: {
        schema: LedgerQuery,
        docs: {
          limit: 'Page size, 1..100.',
          cursor: '`page.next_cursor` of the previous page; omit for the first page.',
          job_id: 'Only entries of this job.',
          kind: 'Only entries of this kind.',
        },
      },
      responses: { '200': { description: 'One page of entries.', name: 'LedgerEntryList', schema: LedgerEntryList } },
      errors: ['INVALID_PARAMETER'],
    },
    {
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      tag: 'API description',
      summary: 'This document',
      description: 'The OpenAPI 3.1 document of the calling key’s form; without a key, pass `form`. No scope needed.',
      security: 'optional-key',
      query: { schema: OpenApiQuery },
      responses: { '200': { description: 'An OpenAPI 3.1 document.', json: { type: 'object', required: ['openapi', 'paths'] } } },
      errors: ['INVALID_PARAMETER', 'unauthorized'],
    },
    {
      method: 'get',
      path: '/docs',
      operationId: 'getDocs',
      tag: 'API description',
      summary: 'API reference page',
      description: 'This document rendered as HTML. Pass `form`; with neither a form nor a key it links to both.',
      security: 'optional-key',
      query: { schema: OpenApiQuery },
      responses: { '200': { description: 'HTML page.', html: true } },
      errors: ['INVALID_PARAMETER', 'unauthorized'],
    },
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      tag: 'Operations',
      summary: 'Health check',
      description: 'Answers 200 once the API reaches its database.',
      security: 'none',
      responses: { '200': { description: 'Healthy.', json: { type: 'object', properties: { ok: { const: true } } } } },
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      tag: 'Operations',
      summary: 'Prometheus metrics',
      description: 'Ledger drift, hold anomalies and settles per job in the Prometheus text format. Admin token.',
      security: 'admin',
      responses: { '200': { description: 'Prometheus text exposition.', html: true } },
      errors: ['unauthorized'],
    },
    ...adminOperations(),
  ]
}

function adminOperations(): Operation[] {
  const ws = { id: 'Workspace id.' }
  const admin = (o: Omit<Operation, 'tag' | 'security'>): Operation => ({
    ...o,
    tag: 'Admin',
    security: 'admin',
    errors: ['unauthorized', ...(o.errors ?? [])],
  })
  return [
    admin({
      method: 'post',
      path: '/admin/v1/workspaces',
      operationId: 'adminCreateWorkspace',
      summary: 'Create a workspace',
      description: '`api_form` is fixed at creation; every `/v1` request with the workspace’s keys is served in it.',
      body: { kind: 'json', name: 'AdminCreateWorkspaceRequest', schema: CreateWorkspace },
      responses: { '201': { description: 'Created.', name: 'Workspace', schema: Workspace } },
      errors: JSON_BODY_ERRORS,
    }),
    admin({
      method: 'get',
      path: '/admin/v1/workspaces/{id}',
      operationId: 'adminGetWorkspace',
      summary: 'Read a workspace',
      pathParams: ws,
      responses: { '200': { description: 'The workspace.', name: 'Workspace', schema: Workspace } },
      errors: ['not_found'],
    }),
    admin({
      method: 'patch',
      path: '/admin/v1/workspaces/{id}',
      operationId: 'adminUpdateWorkspace',
      summary: 'Set the spending cap or default pipeline',
      pathParams: ws,
      body: { kind: 'json', name: 'AdminUpdateWorkspaceRequest', schema: PatchWorkspace },
      responses: { '200': { description: 'The workspace.', name: 'Workspace', schema: Workspace } },
      errors: [...JSON_BODY_ERRORS, 'not_found', 'PIPELINE_NOT_FOUND'],
    }),
    admin({
      method: 'post',
      path: '/admin/v1/workspaces/{id}/api-keys',
      operationId: 'adminCreateApiKey',
      summary: 'Issue an API key',
      description: 'The key is shown once and stored hashed. With `pipeline_id` the key is bound to that pipeline.',
      pathParams: ws,
      body: { kind: 'json', name: 'AdminCreateApiKeyRequest', schema: CreateKey },
      responses: { '201': { description: 'Created.', name: 'CreatedApiKey', schema: CreatedApiKey } },
      errors: [...JSON_BODY_ERRORS, 'not_found', 'PIPELINE_NOT_FOUND'],
    }),
    admin({
      method: 'post',
      path: '/admin/v1/workspaces/{id}/credits',
      operationId: 'adminGrantCredits',
      summary: 'Grant credits',
      pathParams: ws,
      body: { kind: 'json', name: 'AdminGrantCreditsRequest', schema: Grant },
      responses: { '200': { description: 'The balance after the grant.', name: 'Balance', schema: Balance } },
      errors: [...JSON_BODY_ERRORS, 'not_found'],
    }),
    admin({
      method: 'get',
      path: '/admin/v1/workspaces/{id}/notifications',
      operationId: 'adminListNotifications',
      summary: 'Admin notifications',
      description: 'For example a Form B webhook that became `failing`. Newest first, at most 100.',
      pathParams: ws,
      responses: { '200': { description: 'Notifications.', name: 'NotificationList', schema: NotificationList } },
      errors: ['not_found'],
    }),
  ]
}

// ---------------------------------------------------------------------------------------------------------------
// Schema generation

const MAX_INT = Number.MAX_SAFE_INTEGER
type ZodDef = { type: string; catchall?: unknown }

/**
 * Tidies zod's JSON Schema for a reader: no 200-character date-time regex next to `format: date-time`, no ±2^53 bounds
 * on integers, files as OpenAPI 3.1 binary parts, and response objects left open (`additionalProperties` unset) so
 * adding a field is not a breaking change for clients that validate. The tests close them again.
 */
function tidy(ctx: { zodSchema: unknown; jsonSchema: Json }, io: 'input' | 'output') {
  const js = ctx.jsonSchema
  const def = (ctx.zodSchema as { _zod: { def: ZodDef } })._zod.def
  if (js.format === 'date-time') delete js.pattern
  if (js.maximum === MAX_INT) delete js.maximum
  if (js.minimum === -MAX_INT) delete js.minimum
  if (def.type === 'file') {
    delete js.contentEncoding
    js.contentMediaType = 'application/octet-stream'
  }
  if (io === 'output' && def.type === 'object' && def.catchall === undefined && js.additionalProperties === false) {
    delete js.additionalProperties
  }
}

const toJson = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const out = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => tidy(ctx as never, io),
  }) as Json
  delete out.$schema
  return out
}

/** Named schemas of one document: request bodies in input mode, responses in output mode, referenced by name. */
class Components {
  private readonly input = z.registry<{ id: string }>()
  private readonly output = z.registry<{ id: string }>()
  private readonly names = new Map<string, z.ZodType>()

  ref(name: string, schema: z.ZodType, io: 'input' | 'output'): Json {
    const known = this.names.get(name)
    if (known && known !== schema) throw new Error(`two different schemas named ${name}`)
    if (!known) {
      this.names.set(name, schema)
      ;(io === 'input' ? this.input : this.output).add(schema, { id: name })
    }
    return { $ref: `#/components/schemas/${name}` }
  }

  schemas(): Record<string, Json> {
    const out: Record<string, Json> = {}
    for (const io of ['input', 'output'] as const) {
      const generated = z.toJSONSchema(io === 'input' ? this.input : this.output, {
        target: 'draft-2020-12',
        io,
        unrepresentable: 'any',
        uri: (id) => `#/components/schemas/${id}`,
        override: (ctx) => tidy(ctx as never, io),
      }).schemas as Record<string, Json>
      for (const [name, schema] of Object.entries(generated)) {
        const { $schema: _s, $id: _i, ...rest } = schema
        out[name] = rest
      }
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
  }
}

function queryParameters(query: NonNullable<Operation['query']>): Json[] {
  const js = toJson(query.schema, 'input') as { properties?: Record<string, Json>; required?: string[] }
  const properties = js.properties ?? {}
  const docs = query.docs ?? {}
  for (const name of Object.keys(docs)) {
    if (!properties[name]) throw new Error(`query docs name ${name}, which is no parameter`)
  }
  return Object.entries(properties).map(([name, schema]) => {
    const { description: own, ...rest } = schema
    const description = own ?? docs[name]
    return { name, in: 'query', required: js.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest }
  })
}

function errorResponses(codes: DomainErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ReturnType<typeof errorInfo>[]>()
  for (const code of new Set(codes)) {
    const info = errorInfo(code)
    byStatus.set(info.status, [...(byStatus.get(info.status) ?? []), info])
  }
  const out: Record<string, Json> = {}
  for (const [status, infos] of [...byStatus].sort(([a], [b]) => a - b)) {
    const flat = [...new Set(infos.filter((i) => i.envelope === 'flat').map((i) => i.wireCode))]
    const nested = [...new Set(infos.filter((i) => i.envelope === 'nested').map((i) => i.wireCode))]
    const variants: Json[] = []
    if (flat.length) {
      variants.push({ allOf: [{ $ref: '#/components/schemas/FlatError' }, { properties: { error: { enum: flat } } }] })
    }
    if (nested.length) {
      variants.push({
        allOf: [{ $ref: '#/components/schemas/NestedError' }, { properties: { error: { properties: { code: { enum: nested } } } } }],
      })
    }
    out[String(status)] = {
      description: infos.map((i) => `\`${i.wireCode}\` (${i.envelope}): ${ERROR_DESCRIPTIONS[i.code]}`).join('\n\n'),
      content: { 'application/json': { schema: variants.length === 1 ? variants[0] : { anyOf: variants } } },
    }
  }
  return out
}

function security(op: Operation): Json[] {
  if (op.security === 'none') return []
  if (op.security === 'admin') return [{ AdminToken: [] }]
  if (op.security === 'optional-key') return [{}, { ApiKey: [] }]
  // OpenAPI 3.1: for an apiKey scheme the array lists required roles; several requirement objects mean "any of".
  return (op.scopes ?? []).map((s) => ({ ApiKey: [s] }))
}

function operationObject(op: Operation, form: ApiForm, components: Components): Json {
  const params: Json[] = Object.entries(op.pathParams ?? {}).map(([name, description]) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  }))
  if (op.query) params.push(...queryParameters(op.query))

  let requestBody: Json | undefined
  if (op.body) {
    const content: Json = {}
    for (const b of Array.isArray(op.body) ? op.body : [op.body]) {
      content[b.kind === 'json' ? 'application/json' : 'multipart/form-data'] = { schema: components.ref(b.name, b.schema, 'input') }
    }
    requestBody = { required: true, content }
  }

  const responses: Record<string, Json> = {}
  for (const [status, reply] of Object.entries(op.responses)) {
    let content: Json | undefined
    if (reply.html) content = { 'text/html': { schema: { type: 'string' } } }
    else if (reply.json) content = { 'application/json': { schema: reply.json } }
    else if (reply.schema && reply.name) content = { 'application/json': { schema: components.ref(reply.name, reply.schema, 'output') } }
    responses[status] = { description: reply.description, ...(content ? { content } : {}) }
  }
  const errors = [...(op.security === 'key' ? KEY_ERRORS : []), ...(op.errors ?? [])]
  Object.assign(responses, errorResponses(errors))

  const scopeNote = op.scopes?.length ? `Scope: ${op.scopes.map((s) => `\`${s}\``).join(' or ')}.` : ''
  const description = [op.description, scopeNote].filter(Boolean).join('\n\n')
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(description ? { description } : {}),
    security: security(op),
    ...(params.length ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    ...(op.scopes ? { 'x-scopes': op.scopes } : {}),
    'x-form': form,
  }
}

/** Applies PROPERTY_DOCS to generated component schemas; a description naming no property is an error. */
function describeProperties(schemas: Record<string, Json>, docs: Record<string, Record<string, string>>) {
  for (const [name, props] of Object.entries(docs)) {
    const properties = schemas[name]?.properties as Record<string, Json> | undefined
    for (const [prop, text] of Object.entries(props)) {
      const target = properties?.[prop]
      if (!target) throw new Error(`PROPERTY_DOCS: ${name}.${prop} is not a property of the generated schema`)
      target.description ??= text
    }
  }
}

const TAGS = [
  { name: 'Jobs', description: 'One file (Form B) or batch of files (Form A) run through one pipeline.' },
  { name: 'Pipelines', description: 'Versioned pipeline definitions; versions are drafts until published.' },
  { name: 'Webhooks', description: 'Outbound endpoints, HMAC-SHA256 signed deliveries.' },
  { name: 'Documents', description: 'The documents a job produces: lineage, events, extracted data.' },
  { name: 'Credits', description: 'Reserve at submission, settle to the amount used.' },
  { name: 'API description', description: 'This document and its rendered reference.' },
  { name: 'Operations', description: 'For operators.' },
  { name: 'Admin', description: 'Operator API: `Authorization: Bearer $QUIRE_ADMIN_TOKEN`.' },
]

const FORM_NOTES: Record<ApiForm, string> = {
  A: 'Form A: `POST /v1/jobs` takes `pipeline_id` and `file` parts (one job per request); jobs read `id`, `status` (processing, completed, failed, cancelled), `stage_now`, `trace`; webhook secrets are `hmac_secret`; versions read `"v<n>"`. Deliveries are signed `X-Service-Signature: sha256=<hex HMAC-SHA256(raw body)>`.',
  B: 'Form B: `POST /v1/jobs` takes `files` parts (one job per file, `mode=sync` optional); jobs read `job_id`, `status`, `stages` and `result` on request; webhook secrets are `secret`; versions are integers. Deliveries are signed `X-Service-Signature: v1=<hex HMAC-SHA256("<X-Service-Timestamp>.<raw body>")>`.',
}

/** The OpenAPI 3.1 document of one form. */
export function buildOpenApi(form: ApiForm, opts: { serverUrl?: string } = {}): Json {
  const components = new Components()
  components.ref('FlatError', FlatError, 'output')
  components.ref('NestedError', NestedError, 'output')
  components.ref('PipelineDefinition', PipelineDefinition, 'input')
  const paths: Record<string, Record<string, Json>> = {}
  for (const op of operations(form)) {
    paths[op.path] ??= {}
    paths[op.path]![op.method] = operationObject(op, form, components)
  }
  const schemas = components.schemas()
  describeProperties(schemas, PROPERTY_DOCS[form])
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: `Quire API (Form ${form})`,
      version: '1',
      summary: 'Queue-backed document processing: submit files as jobs, poll or receive signed webhooks.',
      description: [
        'Every `/v1` request sends `X-API-Key`; a key belongs to one workspace, and the workspace’s API form (A or B, fixed at creation) decides the shapes below.',
        FORM_NOTES[form],
        'Errors: branch on the HTTP status, then the code. Most errors use the flat envelope `{error, message, timestamp}`; authentication (401 `unauthorized`), scope (403 `insufficient_scope`) and job lookups (404 `job_not_found`, 410 `job_expired`) use the nested envelope `{error: {code, message}}`.',
        'Generated from the schemas that validate requests and shape responses.',
      ].join('\n\n'),
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    tags: TAGS,
    security: [{ ApiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Workspace API key; operations list the scope they need.' },
        AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator token `QUIRE_ADMIN_TOKEN` (admin API only).' },
      },
      schemas,
    },
  }
}

/** Every operation as `METHOD path` — for the test that compares the document with the routers. */
export const documentedRoutes = (form: ApiForm): string[] => operations(form).map((o) => `${o.method.toUpperCase()} ${o.path}`)
