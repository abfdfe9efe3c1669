// Test helper (kept out of dist/): a submission the way the API makes one, for the core package's integration tests.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { FILE_TYPES } from '@quire/domain'
import type { Db } from '@quire/db'
import type { BlobStore } from '@quire/storage'
import { INVOICE_LINES, textPdf } from '../../../../tests/fixtures/make-fixtures.ts'
import { resolvePipeline } from '../pipelines/pipelines.ts'
import { createJob, type JobOptions } from './create-job.ts'
import { intakeFile } from './inspect-files.ts'
import { type KeyState, PrincipalChanged } from '../workspaces/api-keys.ts'

/** A plain submission: async, standard priority, production. */
export const DEFAULT_TEST_JOB_OPTIONS: JobOptions = {
  priority: 'standard',
  executionMode: 'async',
  environment: 'production',
}

/**
 * Writes a PDF (`bytes`, or a text PDF of `pages`) to `dir` as an upload, takes it in (sniff, page count) against
 * the workspace's default pipeline and submits it with createJob. Returns createJob's answer and the pipeline used.
 */
export async function submitTestJob(opts: {
  db: Db
  blobs: BlobStore
  dir: string
  workspaceId: string
  bytes?: Uint8Array
  pages?: string[][]
  options?: Partial<JobOptions>
  /** Passed to createJob; a PrincipalChanged comes back as `{ err, tempPath }` to look for the upload. */
  confirmKey?: KeyState
}) {
  const bytes = opts.bytes ?? (await textPdf(opts.pages ?? [INVOICE_LINES]))
  const tempPath = path.join(opts.dir, `upload-${Math.random().toString(36).slice(2)}.pdf`)
  await writeFile(tempPath, bytes)
  const pipeline = await resolvePipeline({ db: opts.db, workspaceId: opts.workspaceId, allowDraftVersion: false })
  const file = await intakeFile({
    db: opts.db,
    workspaceId: opts.workspaceId,
    file: { tempPath, fileName: 'invoice.pdf', sizeBytes: bytes.length },
    definition: pipeline.definition,
    formTypes: FILE_TYPES,
  })
  const submitted = await createJob({
    db: opts.db,
    blobs: opts.blobs,
    workspaceId: opts.workspaceId,
    pipeline,
    files: [file],
    options: { ...DEFAULT_TEST_JOB_OPTIONS, ...opts.options },
    confirmKey: opts.confirmKey,
  }).catch((err: unknown) => {
    throw err instanceof PrincipalChanged ? { err, tempPath } : err
  })
  return { ...submitted, pipeline }
}
