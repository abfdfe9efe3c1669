import type { Client } from 'openapi-fetch'
import { type FileInput, multipart } from './files.ts'
import type { components, operations, paths } from './generated/form-b.ts'
import { allPages } from './pagination.ts'
import { pollUntil, type WaitOptions } from './polling.ts'
import { type ClientOptions, createTransport, unwrap } from './transport.ts'

type Schemas = components['schemas']
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>

export type FormBJob = Schemas['Job']
export type FormBSubmitted = Schemas['SubmitAccepted'] | Schemas['SubmitCompleted']
export type FormBDocument = Schemas['Document']
export type FormBSubmitParams = Omit<Schemas['SubmitJobRequest'], 'files' | 'mode'> & {
  mode?: 'async' | 'sync'
}

const FINAL: ReadonlySet<string> = new Set<FormBJob['status']>([
  'completed',
  'completed_with_errors',
  'failed',
  'timed_out',
  'cancelled',
])

/** A client for a Form B workspace: one job per file, `mode=sync`, `include=stages,result`. */
export class FormBClient {
  readonly form = 'B' as const
  /** The typed openapi-fetch client, for every operation the helpers do not cover. */
  readonly raw: Client<paths>

  constructor(options: ClientOptions) {
    this.raw = createTransport<paths>(options)
  }

  /**
   * Submits the files, one job each, in order. With `mode: 'sync'` the answer holds finished jobs when they ended
   * inside the server's sync window, else accepted ones (`degradation_reason: 'sync_budget_exceeded'`).
   */
  async submit(files: readonly FileInput[], params: FormBSubmitParams = {}): Promise<FormBSubmitted> {
    const body = await multipart('files', files, params)
    return unwrap(await this.raw.POST('/v1/jobs', { body: body as never, bodySerializer: (b) => b }))
  }

  /** Submits, then polls each job not yet final (with its stages and result) until it is. */
  async submitAndWait(files: readonly FileInput[], params: FormBSubmitParams = {}, wait?: WaitOptions) {
    const submitted = await this.submit(files, params)
    return Promise.all(
      submitted.map((job) =>
        FINAL.has(job.status) && 'api_type' in job ? (job as FormBJob) : this.waitForJob(job.job_id, wait),
      ),
    )
  }

  async getJob(jobId: string, include: readonly ('stages' | 'result')[] = []): Promise<FormBJob> {
    const query = include.length > 0 ? { include: include.join(',') } : {}
    return unwrap(await this.raw.GET('/v1/jobs/{job_id}', { params: { path: { job_id: jobId }, query } }))
  }

  /** Polls until the job is final; answers it with `include=stages,result`. */
  waitForJob(jobId: string, wait?: WaitOptions): Promise<FormBJob> {
    return pollUntil(
      jobId,
      () => this.getJob(jobId, ['stages', 'result']),
      (s) => FINAL.has(s),
      wait,
    )
  }

  /** Every job matching the filters, newest first, across all pages. */
  jobs(query: Omit<Query<'listJobs'>, 'cursor'> = {}): AsyncGenerator<FormBJob> {
    return allPages(async (cursor) =>
      unwrap(await this.raw.GET('/v1/jobs', { params: { query: { ...query, cursor } } })),
    )
  }

  /** Every document matching the filters, across all pages (rows without their data: see `getDocument`). */
  documents(query: Omit<Query<'listDocuments'>, 'cursor'> = {}) {
    return allPages(async (cursor) =>
      unwrap(await this.raw.GET('/v1/documents', { params: { query: { ...query, cursor } } })),
    )
  }

  async getDocument(id: string): Promise<FormBDocument> {
    return unwrap(await this.raw.GET('/v1/documents/{id}', { params: { path: { id } } }))
  }

  /** The extracted fields of each document of a completed job (`include=result`; empty for other statuses). */
  async jobFields(jobId: string): Promise<{ document_id: string; data: FormBDocument['data'] }[]> {
    const job = await this.getJob(jobId, ['result'])
    return (job.result?.documents ?? []).map((d) => ({ document_id: d.id, data: d.data }))
  }

  async reviewDocument(id: string, review: Schemas['ReviewDocumentRequest']): Promise<FormBDocument> {
    return unwrap(await this.raw.POST('/v1/documents/{id}/review', { params: { path: { id } }, body: review }))
  }

  /** Creates a webhook; the answer's `secret` is shown this once. */
  async createWebhook(webhook: Schemas['CreateWebhookRequest']): Promise<Schemas['WebhookWithSecret']> {
    return unwrap(await this.raw.POST('/v1/webhooks', { body: webhook }))
  }

  async rotateWebhookSecret(id: string): Promise<Schemas['WebhookWithSecret']> {
    return unwrap(await this.raw.POST('/v1/webhooks/{id}/rotate', { params: { path: { id } } }))
  }

  async deleteWebhook(id: string): Promise<void> {
    unwrap(await this.raw.DELETE('/v1/webhooks/{id}', { params: { path: { id } } }))
  }
}
