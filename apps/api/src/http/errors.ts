import type { DomainError, DomainErrorCode } from '@quire/domain'

type Envelope = 'flat' | 'nested'

/** The code of a 500 (flat envelope): Quire's own fault, its details in the log under the id the message names. */
export const INTERNAL_ERROR_CODE = 'INTERNAL'

/** The one table from domain error codes to HTTP status, wire code and envelope. */
const ERRORS: Record<DomainErrorCode, { status: number; code?: string; envelope: Envelope }> = {
  unauthorized: { status: 401, envelope: 'nested' },
  insufficient_scope: { status: 403, envelope: 'nested' },
  job_not_found: { status: 404, envelope: 'nested' },
  job_expired: { status: 410, envelope: 'nested' },
  not_found: { status: 404, code: 'NOT_FOUND', envelope: 'flat' },
  MISSING_PART: { status: 400, envelope: 'flat' },
  MISSING_FILE: { status: 400, envelope: 'flat' },
  PIPELINE_NOT_PUBLISHED: { status: 400, envelope: 'flat' },
  PIPELINE_NOT_FOUND: { status: 404, envelope: 'flat' },
  PAYMENT_REQUIRED: { status: 402, envelope: 'flat' },
  VERSION_NOT_FOUND: { status: 404, envelope: 'flat' },
  WEBHOOK_NAME_CONFLICT: { status: 409, envelope: 'flat' },
  FILE_TOO_LARGE: { status: 413, envelope: 'flat' },
  PIPELINE_FILE_TOO_LARGE: { status: 422, code: 'FILE_TOO_LARGE', envelope: 'flat' },
  UNSUPPORTED_FILE_TYPE: { status: 422, envelope: 'flat' },
  INVALID_PARAMETER: { status: 400, envelope: 'flat' },
  INVALID_METADATA: { status: 400, envelope: 'flat' },
  INVALID_DEFINITION: { status: 400, envelope: 'flat' },
  INVALID_WEBHOOK_URL: { status: 422, envelope: 'flat' },
  RESERVED_HEADER: { status: 422, envelope: 'flat' },
  INVALID_EVENT: { status: 422, envelope: 'flat' },
  JOB_NOT_CANCELLABLE: { status: 409, envelope: 'flat' },
  MALFORMED_REQUEST: { status: 400, envelope: 'flat' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, envelope: 'flat' },
  UNKNOWN_PARAMETER: { status: 400, envelope: 'flat' },
  TOO_MANY_FILES: { status: 400, envelope: 'flat' },
  TOO_MANY_FIELDS: { status: 400, envelope: 'flat' },
  FIELDS_TOO_LARGE: { status: 400, envelope: 'flat' },
  UNKNOWN_BUCKET: { status: 400, envelope: 'flat' },
  OBJECT_NOT_FOUND: { status: 404, envelope: 'flat' },
  BUCKET_UNAVAILABLE: { status: 502, envelope: 'flat' },
  DOCUMENT_NOT_IN_REVIEW: { status: 409, envelope: 'flat' },
  ERROR_GROUP_RESOLVED: { status: 409, envelope: 'flat' },
  METHOD_NOT_ALLOWED: { status: 405, envelope: 'flat' },
  HEADERS_TOO_LARGE: { status: 431, envelope: 'flat' },
  REQUEST_TIMEOUT: { status: 408, envelope: 'flat' },
  VALIDATION_ERROR: { status: 400, envelope: 'flat' },
  SERVICE_UNAVAILABLE: { status: 503, envelope: 'flat' },
}

export function errorResponse(err: DomainError): { status: number; body: Record<string, unknown> } {
  const entry = ERRORS[err.code]
  const code = entry.code ?? err.code
  if (entry.envelope === 'nested') return { status: entry.status, body: { error: { code, message: err.message } } }
  return {
    status: entry.status,
    body: {
      error: code,
      message: err.message,
      timestamp: new Date().toISOString(),
      ...(err.details ? { details: err.details } : {}),
    },
  }
}
