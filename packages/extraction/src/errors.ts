/** Why a document could not be read. Stage workers map these to a failed document. */
export type ExtractionErrorCode =
  | 'unsupported_type'
  | 'corrupt_file'
  | 'encrypted'
  | 'too_large'
  | 'ocr_failed'
  /** The OCR engine cannot start (model missing, workers failing): the machine's fault, not the document's. */
  | 'ocr_unavailable'

/**
 * A document-level failure (bad input), as opposed to a bug or an infrastructure error; `ocr_unavailable` is the one
 * code that is not about the document (an operator fixes it).
 */
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
