import { gunzip } from 'node:zlib'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { errorResponse } from './errors.ts'
import { FORMIDABLE, fromBodyError } from './body-errors.ts'

const formidableError = (code: number, httpCode: number) =>
  Object.assign(new Error(`formidable ${code}`), { code, httpCode })
const status = (err: unknown) => {
  const d = fromBodyError(err, { maxFileMb: 100, maxFiles: 20, maxFields: 200, maxFieldsBytes: 2 * 1024 * 1024 })
  return d ? [errorResponse(d).status, errorResponse(d).body.error] : null
}

describe('fromBodyError', () => {
  it('maps every formidable error to a 4xx by its number, not by its httpCode', () => {
    expect(status(formidableError(FORMIDABLE.biggerThanMaxFileSize, 413))).toEqual([413, 'FILE_TOO_LARGE'])
    expect(status(formidableError(FORMIDABLE.biggerThanTotalMaxFileSize, 413))).toEqual([413, 'FILE_TOO_LARGE'])
    expect(status(formidableError(FORMIDABLE.maxFilesExceeded, 413))).toEqual([400, 'TOO_MANY_FILES'])
    expect(status(formidableError(FORMIDABLE.maxFieldsExceeded, 413))).toEqual([400, 'TOO_MANY_FIELDS'])
    expect(status(formidableError(FORMIDABLE.maxFieldsSizeExceeded, 413))).toEqual([400, 'FIELDS_TOO_LARGE'])
    expect(status(formidableError(FORMIDABLE.unknownTransferEncoding, 501))).toEqual([400, 'MALFORMED_REQUEST'])
    expect(status(formidableError(FORMIDABLE.malformedMultipart, 400))).toEqual([400, 'MALFORMED_REQUEST'])
    expect(status(formidableError(FORMIDABLE.aborted, 500))).toEqual([400, 'MALFORMED_REQUEST'])
    expect(status(formidableError(FORMIDABLE.noParser, 415))).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE'])
    expect(status(formidableError(1017, 500))).toEqual([400, 'MALFORMED_REQUEST'])
  })

  it('maps co-body / raw-body errors', () => {
    const syntax = Object.assign(new SyntaxError('Unexpected token } in JSON at position 5'), { status: 400 })
    expect(status(syntax)).toEqual([400, 'MALFORMED_REQUEST'])
    expect(fromBodyError(syntax)!.message).toContain('not valid JSON')
    expect(status({ status: 413, type: 'entity.too.large', limit: 1048576 })).toEqual([400, 'MALFORMED_REQUEST'])
    expect(fromBodyError({ status: 413, type: 'entity.too.large', limit: 1048576 })!.message).toContain('1024 kB')
    expect(status({ status: 415, type: 'encoding.unsupported' })).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE'])
    expect(status({ status: 415, type: 'charset.unsupported' })).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE'])
    expect(status({ status: 400, type: 'request.aborted' })).toEqual([400, 'MALFORMED_REQUEST'])
    expect(status({ status: 400, type: 'request.size.invalid' })).toEqual([400, 'MALFORMED_REQUEST'])
  })

  it('maps a zlib error from a body that does not match its Content-Encoding', async () => {
    const err = await promisify(gunzip)(Buffer.from('not gzip')).catch((e: unknown) => e)
    expect(status(err)).toEqual([400, 'MALFORMED_REQUEST'])
  })

  it('leaves server faults alone', () => {
    expect(fromBodyError(new Error('boom'))).toBeNull()
    expect(fromBodyError(Object.assign(new Error('disk full'), { code: 'ENOSPC' }))).toBeNull()
    expect(fromBodyError({ status: 500, type: 'stream.not.readable' })).toBeNull()
    expect(fromBodyError(undefined)).toBeNull()
  })
})
