import { cancelJob, getJob, listJobs } from '@quire/core'
import {
  CursorPage,
  FormAJob,
  FormAJobCreated,
  FormASubmitFields,
  FormASubmitJson,
  FormBJob,
  FormBJobSubmitted,
  FormBSubmitFields,
  formProfile,
  presentCursorPage,
} from '@quire/forms'
import { z } from 'zod'
import { byForm, defineRoute, type RouteInput } from '../route.ts'
import { submitFormA } from './submit-form-a.ts'
import { submitFormAJson } from './submit-form-a-json.ts'
import { submitFormB } from './submit-form-b.ts'

/** The job list's query; `status` takes the statuses the form shows (Form A's four, Form B's eleven). */
const listQuery = (statuses: readonly [string, ...string[]]) =>
  z.object({
    limit: z.coerce.number().int().min(1).max(100).default(25),
    cursor: z.string().min(1).optional(),
    status: z
      .string()
      .transform((s) => s.split(','))
      .pipe(z.array(z.enum(statuses)))
      .optional(),
    pipeline_id: z.string().optional(),
    source_tag: z.string().optional(),
    environment: z.enum(['production', 'test']).optional(),
    created_after: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
    created_before: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
  })
const ListQuery = { A: listQuery(formProfile('A').jobStatuses), B: listQuery(formProfile('B').jobStatuses) }

/** Form B `include` on job reads (parsed leniently: unknown entries are ignored). */
const IncludeQuery = z.object({
  include: z.string().optional().describe('Comma-separated: `stages`, `result` (for example `stages,result`).'),
})

const LIST_DOCS: Record<string, string> = {
  limit: 'Page size, 1..100.',
  cursor: '`page.next_cursor` of the previous page; omit for the first page.',
  status:
    'Comma-separated job statuses, as the form shows them (Form A: `processing`, `completed`, `failed`, `cancelled`).',
  pipeline_id: 'Only jobs of this pipeline.',
  source_tag: 'Only jobs stamped with this source tag.',
  environment: 'Only `production` or only `test` jobs.',
  created_after: 'Only jobs created after this RFC 3339 time (a job created at exactly this time is left out).',
  created_before: 'Only jobs created before this RFC 3339 time.',
}

const JOB_ID = { job_id: 'Job id.' }

const SUBMIT_ERRORS = [
  'MISSING_PART',
  'PIPELINE_NOT_PUBLISHED',
  'PIPELINE_NOT_FOUND',
  'VERSION_NOT_FOUND',
  'PAYMENT_REQUIRED',
  'FILE_TOO_LARGE',
  'PIPELINE_FILE_TOO_LARGE',
  'UNSUPPORTED_FILE_TYPE',
] as const

const submitJob = defineRoute({
  method: 'post',
  path: '/v1/jobs',
  operationId: byForm({ A: 'submitJob', B: 'submitJobs' }),
  tag: 'Jobs',
  summary: byForm({ A: 'Submit files as one job', B: 'Submit files, one job per file' }),
  description: byForm({
    A: 'All `file` parts form one job (a batch). Instead of uploading, `application/json` references objects in buckets the operator connected (`files: [{bucket, key}]`). Credits are reserved at submission (pages × `credits.per_page`); too few gives 402 and no job. Not idempotent: sending the same file twice creates two jobs.',
    B: 'Each `files` part becomes its own job, created in upload order; if a later file is rejected, jobs already created for earlier files stand and the response is the error. Text parameters may also be sent in the query string. Credits are reserved at submission; too few (or over the spending cap) gives 402. Not idempotent.',
  }),
  auth: 'key',
  // Each handler passes RouteInput.confirmKey to its first write (intake's quarantine record, createJob).
  confirmsKeyInWrite: true,
  scopes: ['jobs:write'],
  body: byForm({
    A: [
      {
        kind: 'multipart',
        name: 'SubmitJobRequest',
        fields: FormASubmitFields,
        fileField: 'file',
        fileDescription:
          'The file(s): PDF, TIFF, PNG, JPEG or DOCX (type decided by content). Repeat the part for a batch: all parts form one job.',
      },
      { kind: 'json', name: 'SubmitJobJsonRequest', schema: FormASubmitJson, validate: 'handler' },
    ],
    B: {
      kind: 'multipart',
      name: 'SubmitJobRequest',
      fields: FormBSubmitFields,
      fileField: 'files',
      fileDescription:
        'The file(s): PDF, DOCX, PNG, JPEG, TIFF, BMP, GIF or WebP, up to 100 MB each. Repeat the part: each file becomes its own job, in upload order.',
      fieldsInQuery: true,
      earlierFilesStand: true,
    },
  }),
  responses: byForm({
    A: {
      '202': { description: 'Accepted; the job runs asynchronously.', name: 'JobCreated', schema: FormAJobCreated },
    },
    B: {
      '200': {
        description:
          '`mode=sync` and every job finished inside the sync window: full jobs (as with `include=stages,result`).',
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
  }),
  errors: byForm({
    A: [
      ...SUBMIT_ERRORS,
      'MISSING_FILE',
      'INVALID_METADATA',
      'UNKNOWN_BUCKET',
      'OBJECT_NOT_FOUND',
      'BUCKET_UNAVAILABLE',
    ],
    B: [...SUBMIT_ERRORS, 'MISSING_FILE'],
  }),
  handle: byForm({
    A: (input: RouteInput) =>
      input.bodyKind === 'json' ? submitFormAJson(input) : submitFormA(input as RouteInput<unknown, FormASubmitFields>),
    B: submitFormB,
  }),
})

const listJobsRoute = defineRoute<z.output<(typeof ListQuery)['B']> & { include?: string }>({
  method: 'get',
  path: '/v1/jobs',
  operationId: 'listJobs',
  tag: 'Jobs',
  summary: 'List jobs',
  description:
    'Newest first, cursor-paginated (keyset on creation time and id: no duplicates or gaps while jobs are added).',
  auth: 'key',
  scopes: ['jobs:read'],
  query: byForm({
    A: { schema: ListQuery.A, docs: LIST_DOCS },
    B: { schema: ListQuery.B.extend(IncludeQuery.shape), docs: LIST_DOCS },
  }),
  responses: byForm({
    A: {
      '200': {
        description: 'One page of jobs.',
        name: 'JobList',
        schema: z.object({ data: z.array(FormAJob), page: CursorPage }),
      },
    },
    B: {
      '200': {
        description: 'One page of jobs.',
        name: 'JobList',
        schema: z.object({ data: z.array(FormBJob), page: CursorPage }),
      },
    },
  }),
  handle: async ({ deps, principal, profile, query: q }) => {
    const page = await listJobs({
      db: deps.db,
      workspaceId: principal.workspaceId,
      limit: q.limit,
      cursor: q.cursor,
      filters: {
        status: q.status && profile.internalJobStatuses(q.status),
        pipelineId: q.pipeline_id,
        sourceTag: q.source_tag,
        environment: q.environment,
        createdAfter: q.created_after,
        createdBefore: q.created_before,
      },
    })
    return {
      status: 200,
      body: {
        data: page.data.map((j) => profile.presentJob(j, { include: q.include })),
        page: presentCursorPage(page),
      },
    }
  },
})

const getJobRoute = defineRoute<{ include?: string }>({
  method: 'get',
  path: '/v1/jobs/{job_id}',
  operationId: 'getJob',
  tag: 'Jobs',
  summary: 'Read a job',
  description: byForm({
    A: 'Status, trace, documents and machine seconds.',
    B: 'Status and input; per-stage progress with `include=stages`, the output with `include=result` once `completed`.',
  }),
  auth: 'key',
  scopes: ['jobs:read'],
  pathParams: JOB_ID,
  query: byForm({ A: undefined, B: { schema: IncludeQuery } }),
  responses: byForm({
    A: { '200': { description: 'The job.', name: 'Job', schema: FormAJob } },
    B: { '200': { description: 'The job.', name: 'Job', schema: FormBJob } },
  }),
  errors: ['job_not_found', 'job_expired'],
  handle: async ({ deps, principal, profile, params, query }) => {
    const job = await getJob({ db: deps.db, workspaceId: principal.workspaceId, jobId: params.job_id! })
    return { status: 200, body: profile.presentJob(job, { include: query.include }) }
  },
})

const cancelJobRoute = defineRoute({
  method: 'post',
  path: '/v1/jobs/{job_id}/cancel',
  operationId: 'cancelJob',
  tag: 'Jobs',
  summary: 'Cancel a job',
  description:
    'Cancels a job that has not finished; the credit hold is released. A finished job gives 409 JOB_NOT_CANCELLABLE.',
  auth: 'key',
  scopes: ['jobs:cancel'],
  pathParams: JOB_ID,
  responses: byForm({
    A: { '200': { description: 'The cancelled job.', name: 'Job', schema: FormAJob } },
    B: { '200': { description: 'The cancelled job.', name: 'Job', schema: FormBJob } },
  }),
  errors: ['job_not_found', 'job_expired', 'JOB_NOT_CANCELLABLE'],
  handle: async ({ deps, principal, profile, params }) => {
    const job = await cancelJob({ db: deps.db, workspaceId: principal.workspaceId, jobId: params.job_id! })
    return { status: 200, body: profile.presentJob(job, {}) }
  },
})

export const JOB_ROUTES = [submitJob, listJobsRoute, getJobRoute, cancelJobRoute]
