import { DomainError, type DomainErrorCode } from '@quire/domain'
import { Timestamp } from '@quire/forms'
import { z } from 'zod'
import { errorResponse } from '../http/errors.ts'

/** Most errors: `{error, message, timestamp}` (plus `details` where the code has them, e.g. validation issues). */
export const FlatError = z
  .object({
    error: z.string().describe('Stable machine code; branch on it.'),
    message: z.string().describe('Human text; may change.'),
    timestamp: Timestamp,
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Structured detail, e.g. `issues` for INVALID_PARAMETER.'),
  })
  .describe('Flat error envelope.')

/** Authentication, scope and job lookups: `{error: {code, message}}`. */
export const NestedError = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .describe('Nested error envelope (authentication, scopes, job lookups).')

export type ErrorInfo = { code: DomainErrorCode; status: number; wireCode: string; envelope: 'flat' | 'nested' }

/** Status, wire code and envelope of a domain error, read from the one table in http/errors.ts. */
export function errorInfo(code: DomainErrorCode): ErrorInfo {
  const res = errorResponse(new DomainError(code, ''))
  const body = res.body as { error: string | { code: string } }
  return typeof body.error === 'string'
    ? { code, status: res.status, wireCode: body.error, envelope: 'flat' }
    : { code, status: res.status, wireCode: body.error.code, envelope: 'nested' }
}

/** When each code occurs (spec error table, DESIGN.md), for the document's response descriptions. */
export const ERROR_DESCRIPTIONS: Record<DomainErrorCode, string> = {
  unauthorized: 'missing or invalid API key (or admin token).',
  insufficient_scope: 'the key lacks the scope the operation needs.',
  job_not_found: 'no job with this id in the workspace.',
  job_expired: 'the job is past retention; its result and documents were deleted.',
  not_found: 'no such resource in the workspace.',
  MISSING_PART: 'no file part in the request (Form A `file`, Form B `files`).',
  MISSING_FILE: 'a `files` part was empty.',
  PIPELINE_NOT_PUBLISHED: 'the pipeline has no published version (and no version was given, Form B).',
  PIPELINE_NOT_FOUND: 'no such pipeline in the workspace.',
  PAYMENT_REQUIRED: 'not enough credits, or the job would exceed the spending cap; no job was created.',
  VERSION_NOT_FOUND: 'the requested pipeline version does not exist.',
  WEBHOOK_NAME_CONFLICT: 'the webhook name is already used in the workspace.',
  FILE_TOO_LARGE:
    'an upload exceeds 100 MB (`details.file_name`); Form B: `details.created_job_ids` lists the jobs already created for the files before it, which stand.',
  PIPELINE_FILE_TOO_LARGE:
    'a file exceeds the pipeline’s own size limit (`accept.max_file_mb`), or a PDF or TIFF has more pages than Quire reads (`details.pages`, `details.max_pages`).',
  UNSUPPORTED_FILE_TYPE: 'the file type (decided by content) is not accepted by the platform or the pipeline.',
  INVALID_PARAMETER: 'a parameter is missing or out of range; `details.issues` names each one.',
  INVALID_METADATA: '`metadata` is not a JSON object of at most 20 string values.',
  INVALID_DEFINITION: 'the pipeline definition is invalid; `details.issues` names each bad path.',
  INVALID_WEBHOOK_URL:
    'the url is not https, or resolves to a private, loopback or link-local address, or does not resolve.',
  RESERVED_HEADER: 'a static header name starts with `X-Service-`.',
  INVALID_EVENT: 'an event id is not one of the form’s events; `details.allowed` lists them.',
  JOB_NOT_CANCELLABLE: 'the job has already finished.',
  MALFORMED_REQUEST: 'the body could not be read (for example invalid JSON).',
  UNSUPPORTED_MEDIA_TYPE:
    'wrong content type (job submission needs multipart/form-data; Form A also takes application/json).',
  UNKNOWN_PARAMETER: 'a parameter this form does not accept (a misspelt name is never silently ignored).',
  TOO_MANY_FILES: 'more file parts than the per-request limit (QUIRE_MAX_FILES_PER_REQUEST).',
  TOO_MANY_FIELDS: 'too many text fields in the multipart body.',
  FIELDS_TOO_LARGE: 'the text fields of the multipart body are too large together.',
  UNKNOWN_BUCKET: 'no connected bucket of that name (Form A JSON submission).',
  OBJECT_NOT_FOUND: 'no object with that key in the bucket (Form A JSON submission).',
  BUCKET_UNAVAILABLE: 'the bucket could not be read; retry later (Form A JSON submission).',
  DOCUMENT_NOT_IN_REVIEW: 'the document is not waiting for review.',
  VALIDATION_ERROR:
    'a string in the request (query, JSON body, form field or file name) contains a NUL character or bytes that are not UTF-8.',
  SERVICE_UNAVAILABLE:
    'a dependency (database or queue) is briefly unavailable; retry after the number of seconds in `Retry-After`.',
  ERROR_GROUP_RESOLVED: 'the error group is already resolved: no job of it is blocked.',
  METHOD_NOT_ALLOWED: 'the path exists but not with this method; `Allow` lists the methods it takes.',
  HEADERS_TOO_LARGE: 'the request line and headers together exceed 16 KB; the connection closes.',
  REQUEST_TIMEOUT: 'the headers did not arrive within 60 s, or the whole request within 5 min; the connection closes.',
}

/** Every domain error code (complete: ERROR_DESCRIPTIONS is a Record over the type). */
export const DOMAIN_ERROR_CODES = Object.keys(ERROR_DESCRIPTIONS) as DomainErrorCode[]
