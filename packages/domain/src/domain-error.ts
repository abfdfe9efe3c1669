/** Every expected failure of a use-case. The API maps `code` to an HTTP status in one table. */
export type DomainErrorCode =
  | 'unauthorized'
  | 'insufficient_scope'
  | 'job_not_found'
  | 'job_expired'
  | 'not_found'
  | 'MISSING_PART'
  | 'MISSING_FILE'
  | 'PIPELINE_NOT_PUBLISHED'
  | 'PIPELINE_NOT_FOUND'
  | 'PAYMENT_REQUIRED'
  | 'VERSION_NOT_FOUND'
  | 'WEBHOOK_NAME_CONFLICT'
  | 'FILE_TOO_LARGE'
  | 'PIPELINE_FILE_TOO_LARGE'
  | 'UNSUPPORTED_FILE_TYPE'
  | 'INVALID_PARAMETER'
  | 'INVALID_METADATA'
  | 'INVALID_DEFINITION'
  | 'INVALID_WEBHOOK_URL'
  | 'RESERVED_HEADER'
  | 'INVALID_EVENT'
  | 'JOB_NOT_CANCELLABLE'
  | 'MALFORMED_REQUEST'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNKNOWN_PARAMETER'
  | 'TOO_MANY_FILES'
  | 'TOO_MANY_FIELDS'
  | 'FIELDS_TOO_LARGE'
  | 'UNKNOWN_BUCKET'
  | 'OBJECT_NOT_FOUND'
  | 'BUCKET_UNAVAILABLE'
  | 'DOCUMENT_NOT_IN_REVIEW'
  | 'ERROR_GROUP_RESOLVED'
  | 'METHOD_NOT_ALLOWED'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'VALIDATION_ERROR'
  | 'SERVICE_UNAVAILABLE'

export class DomainError extends Error {
  readonly code: DomainErrorCode
  readonly details?: Record<string, unknown>

  constructor(code: DomainErrorCode, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'DomainError'
    this.code = code
    this.details = details
    Object.setPrototypeOf(this, new.target.prototype)
  }
}

export const isDomainError = (err: unknown): err is DomainError => err instanceof DomainError
