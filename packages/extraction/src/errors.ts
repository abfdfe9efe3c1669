/** Why a document could not be read. Stage workers map these to a failed document. */
export type ExtractionErrorCode = 'unsupported_type' | 'corrupt_file' | 'encrypted' | 'too_large' | 'ocr_failed'

/** A document-level failure (bad input), as opposed to a bug or an infrastructure error. */
export class ExtractionError extends Error {
  readonly code: ExtractionErrorCode

  constructor(code: ExtractionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ExtractionError'
    this.code = code
  }
}

export function isExtractionError(error: unknown): error is ExtractionError {
  return error instanceof ExtractionError
}
