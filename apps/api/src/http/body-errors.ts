import { DomainError, isDomainError } from '@quire/domain'
import { dependencyDown } from '@quire/runtime'

/**
 * Body-parser failures (formidable for multipart, co-body/raw-body/zlib for JSON) as domain errors with stable codes.
 * None of them is the server's fault, so none may become a 5xx: formidable even tags some of its client errors 413
 * (too many fields) or 501 (an unknown Content-Transfer-Encoding), which is why it is mapped by its own error number.
 */

/** formidable's error numbers (formidable/src/FormidableError.js, 3.x). */
export const FORMIDABLE = {
  aborted: 1002,
  noParser: 1003,
  filenameNotString: 1005,
  maxFieldsSizeExceeded: 1006,
  maxFieldsExceeded: 1007,
  biggerThanTotalMaxFileSize: 1009,
  missingContentType: 1011,
  malformedMultipart: 1012,
  missingMultipartBoundary: 1013,
  unknownTransferEncoding: 1014,
  maxFilesExceeded: 1015,
  biggerThanMaxFileSize: 1016,
} as const

/** A body the client stopped sending (it closed the connection first). */
export const clientAborted = (): DomainError =>
  new DomainError('MALFORMED_REQUEST', 'the request body ended before it was complete (client aborted)')

/** The limits a message can quote; the middleware that knows them passes them. */
export type BodyLimits = { maxFileMb?: number; maxFiles?: number; maxFields?: number; maxFieldsBytes?: number }

type ParserError = {
  code?: unknown
  httpCode?: unknown
  status?: unknown
  type?: unknown
  limit?: unknown
  message?: unknown
}

const asRecord = (err: unknown): ParserError => (err && typeof err === 'object' ? (err as ParserError) : {})

export function isFormidableError(err: unknown): boolean {
  const e = asRecord(err)
  return typeof e.code === 'number' && e.code >= 1000 && e.code < 1100 && typeof e.httpCode === 'number'
}

function fromFormidable(code: number, limits: BodyLimits): DomainError {
  const mb = limits.maxFileMb ?? 100
  switch (code) {
    case FORMIDABLE.biggerThanMaxFileSize:
    case FORMIDABLE.biggerThanTotalMaxFileSize:
      return new DomainError('FILE_TOO_LARGE', `a file exceeds the upload limit of ${mb} MB per file`, {
        max_file_mb: mb,
      })
    case FORMIDABLE.maxFilesExceeded:
      return new DomainError(
        'TOO_MANY_FILES',
        `at most ${limits.maxFiles ?? 'the allowed number of'} files per request`,
        {
          ...(limits.maxFiles !== undefined ? { max_files: limits.maxFiles } : {}),
        },
      )
    case FORMIDABLE.maxFieldsExceeded:
      return new DomainError(
        'TOO_MANY_FIELDS',
        `at most ${limits.maxFields ?? 'the allowed number of'} text fields per request`,
        {
          ...(limits.maxFields !== undefined ? { max_fields: limits.maxFields } : {}),
        },
      )
    case FORMIDABLE.maxFieldsSizeExceeded:
      return new DomainError(
        'FIELDS_TOO_LARGE',
        limits.maxFieldsBytes !== undefined
          ? `the text fields of a request may hold at most ${Math.floor(limits.maxFieldsBytes / 1024)} kB together`
          : 'the text fields of the request are too large',
      )
    case FORMIDABLE.noParser:
      return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'send files as multipart/form-data')
    case FORMIDABLE.aborted:
      return clientAborted()
    case FORMIDABLE.missingMultipartBoundary:
      return new DomainError('MALFORMED_REQUEST', 'the multipart Content-Type has no boundary parameter')
    case FORMIDABLE.missingContentType:
      return new DomainError('MALFORMED_REQUEST', 'the request has a body but no Content-Type')
    case FORMIDABLE.unknownTransferEncoding:
      return new DomainError(
        'MALFORMED_REQUEST',
        'a part has an unsupported Content-Transfer-Encoding (use binary, 7bit, 8bit or base64)',
      )
    case FORMIDABLE.malformedMultipart:
      return new DomainError('MALFORMED_REQUEST', 'the multipart body is malformed or truncated (no closing boundary)')
    default:
      return new DomainError('MALFORMED_REQUEST', 'the multipart body could not be read')
  }
}

/**
 * A body-parser error as a DomainError, or null when `err` is not one (a real server fault stays a 500).
 * Recognises formidable errors (numeric `code` + `httpCode`), raw-body/co-body errors (`type`, or a 4xx `status`),
 * JSON syntax errors from co-body (SyntaxError with status 400) and zlib errors from a bad `Content-Encoding` body.
 */
export function fromBodyError(err: unknown, limits: BodyLimits = {}): DomainError | null {
  const e = asRecord(err)
  if (isFormidableError(err)) return fromFormidable(e.code as number, limits)
  // zlib (gzip, deflate: Z_DATA_ERROR ...) and brotli (ERR__ERROR_FORMAT_..., ERR_BROTLI_...) decoder errors.
  if (typeof e.code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(e.code)) {
    return new DomainError(
      'MALFORMED_REQUEST',
      'the request body could not be decompressed (Content-Encoding does not match the body)',
    )
  }
  switch (e.type) {
    case 'entity.too.large': {
      const kb = typeof e.limit === 'number' ? ` than ${Math.floor(e.limit / 1024)} kB` : ''
      return new DomainError('MALFORMED_REQUEST', `the request body is larger${kb}`)
    }
    case 'encoding.unsupported':
      return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'unsupported Content-Encoding (use gzip, deflate or none)')
    case 'charset.unsupported':
      return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'unsupported charset (send UTF-8)')
    case 'request.aborted':
      return clientAborted()
    case 'request.size.invalid':
      return new DomainError('MALFORMED_REQUEST', 'the request body does not match its Content-Length')
    default:
      break
  }
  const status = typeof e.status === 'number' ? e.status : undefined
  if (status === 415) return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'unsupported content type')
  if (status !== undefined && status >= 400 && status < 500) {
    const why = typeof e.message === 'string' ? e.message : 'malformed'
    if (err instanceof SyntaxError) return new DomainError('MALFORMED_REQUEST', `the body is not valid JSON: ${why}`)
    return new DomainError('MALFORMED_REQUEST', `the request body could not be read: ${why}`)
  }
  return null
}

/**
 * Errors that are the client's doing but arrive as library errors: body-parser failures (formidable, co-body,
 * raw-body, zlib) and a malformed percent-encoding in the path (URIError from decoding route parameters).
 */
export function fromClientError(raw: unknown): DomainError | null {
  if (raw instanceof URIError)
    return new DomainError('MALFORMED_REQUEST', 'the request URL contains malformed percent-encoding')
  return fromBodyError(raw)
}

/** Seconds a client is asked to wait (Retry-After) while a dependency is down. */
export const OUTAGE_RETRY_AFTER_S = 5

/** A dependency outage as 503 SERVICE_UNAVAILABLE; null for any other error. The log says which dependency. */
export function fromOutage(raw: unknown): DomainError | null {
  return dependencyDown(raw) ? serviceUnavailable() : null
}

/** What a client is answered while a dependency is down: no internals, the log says which one. */
export const serviceUnavailable = (): DomainError =>
  new DomainError('SERVICE_UNAVAILABLE', 'the service is briefly unavailable; retry in a few seconds', {
    retry_after_s: OUTAGE_RETRY_AFTER_S,
  })

/** Any error as the domain error the client should see, or null for Quire's own fault (a 500). */
export function toClientError(raw: unknown): DomainError | null {
  return isDomainError(raw) ? raw : (fromClientError(raw) ?? fromOutage(raw))
}
