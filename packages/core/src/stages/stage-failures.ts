import { isExtractionError, type ExtractionErrorCode } from '@quire/extraction'

/**
 * A failure an operator can fix (a destination that refuses writes, blob storage unavailable, an OCR engine that
 * cannot start). The job is parked (`blocked`) in an error group instead of failing (DESIGN, "Processing
 * lifecycle"); re-running it after the fix carries on from the stage that blocked.
 */
export class OperatorFixableError extends Error {
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'OperatorFixableError'
    this.code = code
  }
}

export const isOperatorFixable = (err: unknown): err is OperatorFixableError => err instanceof OperatorFixableError

/** The public error code of a document that cannot be read (Form B `error.code`). */
const DOCUMENT_ERROR_CODES: Record<Exclude<ExtractionErrorCode, 'ocr_unavailable'>, string> = {
  corrupt_file: 'corrupt_file',
  encrypted: 'encrypted_file',
  too_large: 'file_too_large',
  unsupported_type: 'unsupported_file',
  ocr_failed: 'ocr_failed',
}

export type DocumentFailure = { code: string; message: string }

/**
 * What an error raised while reading one document means: the document's own fault (returned, the document fails and
 * the job goes on with the others), the machine's (thrown as OperatorFixableError, the job parks), or anything else
 * (re-thrown: a bug or a transient fault, retried by the queue), unless `otherwise` names the document code such
 * errors get.
 */
export function documentFailure(err: unknown, what: string, opts: { otherwise?: string } = {}): DocumentFailure {
  if (isOperatorFixable(err)) throw err
  if (isExtractionError(err)) {
    if (err.code === 'ocr_unavailable') throw new OperatorFixableError('ocr_unavailable', err.message, { cause: err })
    const code = DOCUMENT_ERROR_CODES[err.code]
    const cause = err.code === 'encrypted' ? 'is encrypted' : err.code === 'corrupt_file' ? 'is damaged' : 'failed'
    return { code, message: `${what} ${cause}: ${err.message}` }
  }
  if (opts.otherwise)
    return { code: opts.otherwise, message: `${what} failed: ${(err as Error)?.message ?? String(err)}` }
  throw err
}

/** Blob storage answered with something other than "not there": the store is unreachable or refuses us. */
export function blobStorageUnavailable(err: unknown): OperatorFixableError {
  return new OperatorFixableError(
    'blob_storage_unavailable',
    `blob storage unavailable: ${(err as Error)?.message ?? String(err)}`,
    { cause: err },
  )
}
