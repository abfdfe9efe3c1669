import type { Client } from 'openapi-fetch'
import { type FileInput, multipart } from './files.ts'
import type { components, operations, paths } from './generated/form-a.ts'
import { allPages } from './pagination.ts'
import { pollUntil, type WaitOptions } from './polling.ts'
import { type ClientOptions, createTransport, unwrap } from './transport.ts'

type Schemas = components['schemas']
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>

export type FormAJob = Schemas['Job']
export type FormAJobCreated = Schemas['JobCreated']
export type FormADocument = Schemas['Document']
export type FormASubmitParams = Omit<Schemas['SubmitJobRequest'], 'file' | 'metadata'> & {
  metadata?: Record<string, string>
}

const FINAL: ReadonlySet<string> = new Set<FormAJob['status']>(['completed', 'failed', 'cancelled'])

/** A client for a Form A workspace: its shapes, its statuses (`processing` until `completed`/`failed`/`cancelled`). */
export class FormAClient {
  readonly form = 'A' as const
  /** The typed openapi-fetch client, for every operation the helpers do not cover. */
  readonly raw: Client<paths>

  constructor(options: ClientOptions) {
    this.raw = createTransport<paths>(options)
  }

  /** Submits the files as one job (Form A: all `file` parts form one job). */
  async submit(files: readonly FileInput[], params: FormASubmitParams): Promise<FormAJobCreated> {
    const { metadata, ...text } = params
    const body = await multipart('file', files, { ...text, metadata: metadata && JSON.stringify(metadata) })
    return unwrap(await this.raw.POST('/v1/jobs', { body: body as never, bodySerializer: (b) => b }))
  }

  /** Submits, then polls the job until it is final. */
  async submitAndWait(files: readonly FileInput[], params: FormASubmitParams, wait?: WaitOptions): Promise<FormAJob> {
    const { id } = await this.submit(files, params)
    return this.waitForJob(id, wait)
  }

  async getJob(jobId: string): Promise<FormAJob> {
    return unwrap(await this.raw.GET('/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } }))
  }

  waitForJob(jobId: string, wait?: WaitOptions): Promise<FormAJob> {
    return pollUntil(
      jobId,
      () => this.getJob(jobId),
      (s) => FINAL.has(s),
      wait,
    )
  }

  /** Every job matching the filters, newest first, across all pages. */
  jobs(query: Omit<Query<'listJobs'>, 'cursor'> = {}): AsyncGenerator<FormAJob> {
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

  async getDocument(id: string): Promise<FormADocument> {
    return unwrap(await this.raw.GET('/v1/documents/{id}', { params: { path: { id } } }))
  }

  /** The extracted fields of each document of a job. */
  async jobFields(jobId: string): Promise<{ document_id: string; data: FormADocument['data'] }[]> {
    const job = await this.getJob(jobId)
    const documents = await Promise.all(job.documents.map((d) => this.getDocument(d.id)))
    return documents.map((d) => ({ document_id: d.id, data: d.data }))
  }

  async reviewDocument(id: string, review: Schemas['ReviewDocumentRequest']): Promise<FormADocument> {
    return unwrap(await this.raw.POST('/v1/documents/{id}/review', { params: { path: { id } }, body: review }))
  }

  /** Creates a webhook; the answer's `hmac_secret` is shown this once. */
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
