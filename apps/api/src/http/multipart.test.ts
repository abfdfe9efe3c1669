// The multipart middleware in-process, behind the real error handler, spoken to over raw sockets so that each test
// sends exactly the bytes it means. Limits are small here (1 MB per file, 3 files); the black-box suite runs the
// spec's 100 MB against the real API.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import Koa from 'koa'
import pino from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { multipartBytes, rawRequest, type RawResponse } from '../../../../tests/blackbox/raw-http.ts'
import { errorHandler } from '../middleware/error-handler.ts'
import {
  extendedFileName,
  fieldsOf,
  filesOf,
  MAX_FIELDS,
  maxRequestBodyBytes,
  multipartMiddleware,
  refusedFileOf,
  sanitiseFileName,
  toUploaded,
} from './multipart.ts'
import { SNIFF_HEAD_BYTES } from '@quire/extraction'

const MB = 1024 * 1024
const LIMIT = 1 * MB
const B = 'quire-test-boundary'
let dir: string
let server: Served
let seen: {
  fields: Record<string, unknown>
  files: { field: string; name: string | null; size: number; existed: boolean }[]
} | null

type Served = { port: number; close(): Promise<void> }

/** The middleware behind the real error handler, then `route`, listening on a free local port. */
async function serve(options: Parameters<typeof multipartMiddleware>[0], route: Koa.Middleware): Promise<Served> {
  const app = new Koa()
  // Koa prints socket errors of clients that hang up mid-request ("Parse Error") to stderr; they are expected here.
  app.silent = true
  app.use(errorHandler(pino({ level: 'silent' })))
  app.use(multipartMiddleware(options))
  app.use(route)
  const listening = app.listen(0, '127.0.0.1')
  await new Promise((r) => listening.once('listening', r))
  return {
    port: (listening.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => listening.close(() => r())),
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'quire-multipart-'))
  server = await serve(
    {
      uploadDir: dir,
      maxFileBytes: LIMIT,
      maxFiles: 3,
      parameters: (ctx) => (ctx.get('x-any-names') ? null : { fileField: 'files', text: ['a', 'b'], query: ['a'] }),
    },
    async (ctx) => {
      const files = ['files', 'file', 'other'].flatMap((field) =>
        filesOf(ctx as never, field).map((f) => ({
          field,
          name: f.originalFilename,
          size: f.size,
          existed: existsSync(f.filepath),
        })),
      )
      seen = { fields: fieldsOf(ctx as never), files }
      ctx.body = { ok: true }
    },
  )
})

afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

beforeEach(() => {
  seen = null
})

/** A multipart POST of exactly these bytes to a test server. */
const postTo = (port: number, body: Buffer | Buffer[], opts: Partial<Parameters<typeof rawRequest>[0]> = {}) => {
  const len = (Array.isArray(body) ? body : [body]).reduce((n, b) => n + b.length, 0)
  return rawRequest({
    port,
    head: [
      'POST /upload HTTP/1.1',
      'Host: test',
      `Content-Type: multipart/form-data; boundary=${B}`,
      `Content-Length: ${len}`,
    ],
    body,
    ...opts,
  })
}
const post = (body: Buffer | Buffer[], opts: Partial<Parameters<typeof rawRequest>[0]> = {}) =>
  postTo(server.port, body, opts)
const filePart = (field: string, name: string, content: string | Buffer, type = 'application/pdf') => ({
  headers: [`Content-Disposition: form-data; name="${field}"; filename="${name}"`, `Content-Type: ${type}`],
  content,
})
const textPart = (field: string, value: string) => ({
  headers: [`Content-Disposition: form-data; name="${field}"`],
  content: value,
})

/** Temporary files are removed before the response is written. */
const expectNoTempFiles = () => expect(readdirSync(dir)).toEqual([])
const expectFlat = (res: RawResponse, status: number, code: string) => {
  expect(res.status).toBe(status)
  expect(res.json).toMatchObject({ error: code, message: expect.any(String), timestamp: expect.any(String) })
  expect(new Date(res.json.timestamp).toISOString()).toBe(res.json.timestamp)
}

describe('multipart parsing', () => {
  it("keeps each stored file's first bytes as it streams, for intake to sniff its type from", async () => {
    let heads: { head: Buffer | undefined; file: Buffer }[] = []
    const served = await serve({ uploadDir: dir, maxFileBytes: LIMIT, maxFiles: 3 }, async (ctx) => {
      heads = filesOf(ctx as never, 'files').map((f) => ({ head: toUploaded(f).head, file: readFileSync(f.filepath) }))
      ctx.body = { ok: true }
    })
    try {
      const large = randomBytes(3 * SNIFF_HEAD_BYTES + 123)
      const body = multipartBytes(B, [filePart('files', 'a.pdf', large), filePart('files', 'b.pdf', '%PDF-1.4 small')])
      // In pieces, so the large file arrives in many writes.
      const pieces = Array.from({ length: Math.ceil(body.length / 5000) }, (_, i) =>
        body.subarray(i * 5000, (i + 1) * 5000),
      )
      const res = await postTo(served.port, pieces)
      expect(res.status).toBe(200)
      expect(heads.map((h) => h.file.length)).toEqual([large.length, 14])
      expect(heads[0]!.head).toEqual(large.subarray(0, SNIFF_HEAD_BYTES))
      expect(heads[1]!.head).toEqual(Buffer.from('%PDF-1.4 small'))
    } finally {
      await served.close()
    }
    expectNoTempFiles()
  })

  it('streams files to temporary files and hands the route text fields and files; removes the temporary files afterwards', async () => {
    const res = await post(
      multipartBytes(B, [
        textPart('a', 'one'),
        filePart('files', 'x.pdf', '%PDF-1.4 hello'),
        filePart('files', 'y.pdf', 'abc'),
      ]),
    )
    expect(res.status).toBe(200)
    expect(seen!.fields).toEqual({ a: 'one' })
    expect(seen!.files).toEqual([
      { field: 'files', name: 'x.pdf', size: 14, existed: true },
      { field: 'files', name: 'y.pdf', size: 3, existed: true },
    ])
    expectNoTempFiles()
  })

  it('takes a part with a file name but no Content-Type as a file, and a text/plain part without one as a text field', async () => {
    const res = await post(
      multipartBytes(B, [
        { headers: ['Content-Disposition: form-data; name="files"; filename="bare.bin"'], content: 'data' },
        {
          headers: ['Content-Disposition: form-data; name="b"', 'Content-Type: text/plain; charset=utf-8'],
          content: 'text',
        },
      ]),
    )
    expect(res.status).toBe(200)
    expect(seen!.fields).toEqual({ b: 'text' })
    expect(seen!.files).toEqual([{ field: 'files', name: 'bare.bin', size: 4, existed: true }])
  })

  it('decodes RFC 5987 filename* and prefers it', async () => {
    const res = await post(
      multipartBytes(B, [
        {
          headers: [
            `Content-Disposition: form-data; name="files"; filename="fallback.pdf"; filename*=UTF-8''%E2%82%AC%20rates.pdf`,
            'Content-Type: application/pdf',
          ],
          content: 'x',
        },
      ]),
    )
    expect(res.status).toBe(200)
    expect(seen!.files[0]!.name).toBe('€ rates.pdf')
  })

  it('accepts several files each just under the per-file limit although together they exceed it', async () => {
    const big = Buffer.alloc(LIMIT - 10, 1)
    const res = await post(
      multipartBytes(B, [
        filePart('files', 'a.pdf', big),
        filePart('files', 'b.pdf', big),
        filePart('files', 'c.pdf', big),
      ]),
    )
    expect(res.status).toBe(200)
    expect(seen!.files.map((f) => f.size)).toEqual([LIMIT - 10, LIMIT - 10, LIMIT - 10])
    expectNoTempFiles()
  })

  it('hands files over in the order the parts arrived, whatever order their writes finish in (spec: upload order)', async () => {
    // The writes of small files finish in thread-pool order, so a reordering shows within a few rounds.
    const names = ['a.pdf', 'b.pdf', 'c.pdf']
    for (let round = 0; round < 60; round++) {
      const res = await post(
        multipartBytes(
          B,
          names.map((n) => filePart('files', n, n)),
        ),
      )
      expect(res.status).toBe(200)
      expect(seen!.files.map((f) => f.name)).toEqual(names)
    }
  })

  it('accepts a file of exactly the limit', async () => {
    const res = await post(multipartBytes(B, [filePart('files', 'a.pdf', Buffer.alloc(LIMIT, 2))]))
    expect(res.status).toBe(200)
    expect(seen!.files[0]!.size).toBe(LIMIT)
  })
})

describe('limits', () => {
  it('cuts a file off as soon as it passes the per-file limit: 413 FILE_TOO_LARGE before the client has sent it all, nothing left', async () => {
    const head = Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="files"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    )
    const chunk = Buffer.alloc(64 * 1024, 7)
    let produced = 0
    const total = 50 * LIMIT // the client would send 50 MB; the server must answer after about 1 MB
    const res = await rawRequest({
      port: server.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + total}`,
      ],
      body: head,
      stream: () => (produced >= total ? null : ((produced += chunk.length), chunk)),
    })
    expectFlat(res, 413, 'FILE_TOO_LARGE')
    expect(res.headers.connection).toBe('close')
    expect(res.bodyBytesWritten).toBeLessThan(total / 2)
    expect(seen).toBeNull()
    expectNoTempFiles()
  })

  it('413 also for a too-large second file after an accepted first one; both temporary files removed', async () => {
    const res = await post(
      multipartBytes(B, [
        filePart('files', 'a.pdf', Buffer.alloc(1000)),
        filePart('files', 'b.pdf', Buffer.alloc(LIMIT + 1)),
      ]),
    )
    expectFlat(res, 413, 'FILE_TOO_LARGE')
    expectNoTempFiles()
  })

  it('more file parts than allowed → 400 TOO_MANY_FILES', async () => {
    const res = await post(
      multipartBytes(
        B,
        [1, 2, 3, 4].map((i) => filePart('files', `${i}.pdf`, 'x')),
      ),
    )
    expectFlat(res, 400, 'TOO_MANY_FILES')
    expect(res.json.details).toEqual({ max_files: 3 })
    expectNoTempFiles()
  })

  it('thousands of text fields → 400 TOO_MANY_FIELDS', async () => {
    const res = await post(
      multipartBytes(
        B,
        Array.from({ length: 5000 }, () => textPart('a', 'v')),
      ),
    )
    expectFlat(res, 400, 'TOO_MANY_FIELDS')
    expect(MAX_FIELDS).toBeLessThan(5000)
  })

  it('text fields larger than allowed together → 400 FIELDS_TOO_LARGE', async () => {
    const res = await post(multipartBytes(B, [textPart('a', 'x'.repeat(3 * MB))]))
    expectFlat(res, 400, 'FIELDS_TOO_LARGE')
  })

  it('a part whose headers never end → 400 MALFORMED_REQUEST, not unbounded memory', async () => {
    const body = Buffer.concat([
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"; x="`),
      Buffer.alloc(1 * MB, 0x61),
    ])
    const res = await post(body)
    expectFlat(res, 400, 'MALFORMED_REQUEST')
  })
})

describe('unknown parameters', () => {
  it('an unknown text field → 400 UNKNOWN_PARAMETER naming it', async () => {
    const res = await post(multipartBytes(B, [textPart('pipline_id', 'x'), filePart('files', 'a.pdf', 'x')]))
    expectFlat(res, 400, 'UNKNOWN_PARAMETER')
    expect(res.json.details).toEqual({ parameters: ['pipline_id'] })
    expect(res.json.message).toContain('"pipline_id"')
    expect(seen).toBeNull()
    expectNoTempFiles()
  })

  it('names every unknown parameter once: text, file and query', async () => {
    const body = multipartBytes(B, [
      textPart('__proto__', 'x'),
      filePart('files', 'a.pdf', 'x'),
      filePart('other', 'b.pdf', 'y'),
      textPart('__proto__', 'z'),
    ])
    const res = await rawRequest({
      port: server.port,
      head: [
        'POST /upload?a=1&zzz=2 HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${body.length}`,
      ],
      body,
    })
    expectFlat(res, 400, 'UNKNOWN_PARAMETER')
    expect(res.json.details).toEqual({ parameters: ['__proto__', 'other', 'zzz'] })
    expectNoTempFiles()
  })

  it('without any part of the file field the request goes on (the route answers MISSING_PART), and nothing else is stored', async () => {
    const res = await post(multipartBytes(B, [textPart('typo', 'x'), filePart('file', 'a.pdf', 'x')]))
    expect(res.status).toBe(200)
    expect(seen!.files).toEqual([])
    expectNoTempFiles()
  })
})

describe('malformed bodies', () => {
  it('a part without a name → 400 MALFORMED_REQUEST', async () => {
    const res = await post(Buffer.from(`--${B}\r\n\r\nhello\r\n--${B}--\r\n`))
    expectFlat(res, 400, 'MALFORMED_REQUEST')
  })

  it('no closing boundary → 400 MALFORMED_REQUEST, the half-written file removed', async () => {
    const res = await post(
      multipartBytes(B, [filePart('files', 'a.pdf', Buffer.alloc(300_000, 3))], false).subarray(0, 200_000),
    )
    expectFlat(res, 400, 'MALFORMED_REQUEST')
    expectNoTempFiles()
  })

  it('a boundary that never appears → 400 MALFORMED_REQUEST', async () => {
    const res = await post(Buffer.alloc(100_000, 0x41))
    expectFlat(res, 400, 'MALFORMED_REQUEST')
  })

  it('a multipart Content-Type without boundary → 400 MALFORMED_REQUEST', async () => {
    const body = Buffer.from('whatever')
    const res = await rawRequest({
      port: server.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        'Content-Type: multipart/form-data',
        `Content-Length: ${body.length}`,
      ],
      body,
    })
    expectFlat(res, 400, 'MALFORMED_REQUEST')
  })

  it('an unknown Content-Transfer-Encoding → 400 MALFORMED_REQUEST (formidable says 501)', async () => {
    const res = await post(
      multipartBytes(B, [
        {
          headers: [
            'Content-Disposition: form-data; name="files"; filename="a.pdf"',
            'Content-Transfer-Encoding: gzip',
          ],
          content: 'x',
        },
      ]),
    )
    expectFlat(res, 400, 'MALFORMED_REQUEST')
  })

  // Reliability item 1: a text part with `Content-Transfer-Encoding: 7bit` made formidable throw ERR_UNKNOWN_ENCODING
  // from an async listener, outside any handler, and the process exited. Every encoding must end as an answer.
  it.each(['7bit', '8bit', 'binary', 'BINARY', 'utf-8', '8BIT'])(
    'a text part with Content-Transfer-Encoding: %s is read as UTF-8 text; the server keeps serving',
    async (encoding) => {
      const res = await post(
        multipartBytes(B, [
          {
            headers: ['Content-Disposition: form-data; name="a"', `Content-Transfer-Encoding: ${encoding}`],
            content: 'héllo',
          },
          {
            headers: [...filePart('files', 'a.pdf', 'x').headers, `Content-Transfer-Encoding: ${encoding}`],
            content: 'x',
          },
        ]),
      )
      expect(res.status).toBe(200)
      expect(seen?.fields).toEqual({ a: 'héllo' })
      expect(seen?.files.map((f) => f.size)).toEqual([1])
      expectNoTempFiles()
    },
  )

  it('a base64 text part is decoded once, to its text', async () => {
    const res = await post(
      multipartBytes(B, [
        {
          headers: ['Content-Disposition: form-data; name="a"', 'Content-Transfer-Encoding: base64'],
          content: Buffer.from('grüße').toString('base64'),
        },
      ]),
    )
    expect(res.status).toBe(200)
    expect(seen?.fields).toEqual({ a: 'grüße' })
  })

  it.each(['quoted-printable', 'x-uuencode', 'gzip', '', 'utf-16le', 'latin1\u0000'])(
    'a text part with an unsupported Content-Transfer-Encoding %j → 400 MALFORMED_REQUEST, never a crash',
    async (encoding) => {
      const res = await post(
        multipartBytes(B, [
          {
            headers: ['Content-Disposition: form-data; name="a"', `Content-Transfer-Encoding: ${encoding}`],
            content: 'x',
          },
        ]),
      )
      expectFlat(res, 400, 'MALFORMED_REQUEST')
      const ok = await post(multipartBytes(B, [textPart('a', '1')]))
      expect(ok.status).toBe(200)
    },
  )

  it('another content type → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = Buffer.from('{"a":1}')
    const res = await rawRequest({
      port: server.port,
      head: ['POST /upload HTTP/1.1', 'Host: test', 'Content-Type: application/json', `Content-Length: ${body.length}`],
      body,
    })
    expectFlat(res, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('a client that drops the connection mid-file leaves no temporary file and the server keeps serving', async () => {
    const part = multipartBytes(B, [filePart('files', 'a.pdf', Buffer.alloc(500_000, 5))])
    await rawRequest({
      port: server.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${part.length}`,
      ],
      body: part.subarray(0, 300_000),
      closeAfterBody: 'destroy',
    })
    await waitFor(() => readdirSync(dir).length === 0)
    expectNoTempFiles()
    const ok = await post(multipartBytes(B, [filePart('files', 'a.pdf', 'x')]))
    expect(ok.status).toBe(200)
  })

  it('a client that half-closes mid-file gets an answer or a closed connection, never a hang; nothing is left', async () => {
    const part = multipartBytes(B, [filePart('files', 'a.pdf', Buffer.alloc(500_000, 5))])
    const res = await rawRequest({
      port: server.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${part.length}`,
      ],
      body: part.subarray(0, 300_000),
      closeAfterBody: 'end',
    })
    expect([0, 400]).toContain(res.status)
    await waitFor(() => readdirSync(dir).length === 0)
    expectNoTempFiles()
  })
})

describe('file names', () => {
  it('keeps only the last path segment and drops control and bidi characters', () => {
    expect(sanitiseFileName('../../etc/passwd')).toBe('passwd')
    expect(sanitiseFileName('C:\\x\\y.pdf')).toBe('y.pdf')
    expect(sanitiseFileName('a\u0000b\u0007c\u202e.pdf')).toBe('abc.pdf')
    expect(sanitiseFileName('..')).toBe('upload')
    expect(sanitiseFileName('dir/')).toBe('upload')
    expect(sanitiseFileName('')).toBe('upload')
    expect(sanitiseFileName('\ud800x.pdf')).toBe('\ufffdx.pdf')
    const long = '😀'.repeat(300)
    expect(Array.from(sanitiseFileName(long))).toHaveLength(255)
    expect(sanitiseFileName(long)).toBe('😀'.repeat(255))
  })

  it('decodes filename* values', () => {
    expect(extendedFileName(`form-data; name="f"; filename*=UTF-8''%C3%A9t%C3%A9.pdf`)).toBe('été.pdf')
    expect(extendedFileName(`form-data; name="f"; filename*=iso-8859-1'en'%E9t%E9.pdf`)).toBe('été.pdf')
    expect(extendedFileName(`form-data; name="f"; filename*=UTF-8''%FF%FE.pdf`)).toBe('\ufffd\ufffd.pdf')
    expect(extendedFileName('form-data; name="f"; filename="a.pdf"')).toBeNull()
    expect(extendedFileName(undefined)).toBeNull()
  })

  it('a non-UTF-8 file name arrives with replacement characters, never as an error', async () => {
    const disposition = Buffer.concat([
      Buffer.from('Content-Disposition: form-data; name="files"; filename="', 'latin1'),
      Buffer.from([0xff, 0xfe, 0x41, 0xc3]),
      Buffer.from('.pdf"\r\nContent-Type: application/pdf\r\n\r\nx\r\n', 'latin1'),
    ])
    const body = Buffer.concat([Buffer.from(`--${B}\r\n`), disposition, Buffer.from(`--${B}--\r\n`)])
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(seen!.files[0]!.name).toMatch(/^\ufffd+A\ufffd?\.pdf$/)
  })
})

// Spec, POST /v1/jobs, Form B responses item 4: "Files are processed in order. If a later file is rejected, jobs
// already created for earlier files stand and the response is the error." The middleware's part: the files before the
// refused one reach the route with every text field of the request; nothing of the refused file or of a later file is
// kept. (What the route makes of it is checked black-box, tests/blackbox/bad-input.test.ts.)
describe('earlierFilesStand: a later file over the limit', () => {
  const STAND = { uploadDir: '', maxFileBytes: LIMIT, maxFiles: 3, maxFields: 10, maxFieldsBytes: 64 * 1024 }
  let stand: Served
  let standSeen: { fields: Record<string, unknown>; files: string[]; tempFiles: number } | null

  beforeAll(async () => {
    stand = await serve(
      {
        ...STAND,
        uploadDir: dir,
        earlierFilesStand: true,
        parameters: () => ({ fileField: 'files', text: ['a', 'b'], query: [] }),
      },
      async (ctx) => {
        standSeen = {
          fields: fieldsOf(ctx as never),
          files: filesOf(ctx as never, 'files').map((f) => f.originalFilename ?? ''),
          tempFiles: readdirSync(dir).length,
        }
        const refused = refusedFileOf(ctx as never)
        if (refused) throw refused
        ctx.body = { ok: true }
      },
    )
  })
  afterAll(async () => {
    await stand.close()
  })
  beforeEach(() => {
    standSeen = null
  })

  const send = (body: Buffer) => postTo(stand.port, body)
  const bigHead = Buffer.from(
    `--${B}\r\nContent-Disposition: form-data; name="files"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  )
  const frame = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')])

  it('rule 4: text fields after the refused file reach the route with the file before it; the refused and later files are never kept', async () => {
    const res = await send(
      multipartBytes(B, [
        filePart('files', 'a.pdf', Buffer.alloc(1000, 1)),
        filePart('files', 'big.pdf', Buffer.alloc(3 * LIMIT, 2)),
        textPart('a', 'after'),
        filePart('files', 'later.pdf', Buffer.alloc(1000, 3)),
        textPart('b', 'last'),
      ]),
    )
    expectFlat(res, 413, 'FILE_TOO_LARGE')
    expect(res.json.details).toMatchObject({ file_name: 'big.pdf', max_file_mb: 1 })
    // The whole body was read: the connection stays open for the next request.
    expect(res.headers.connection).not.toBe('close')
    expect(standSeen).toEqual({ fields: { a: 'after', b: 'last' }, files: ['a.pdf'], tempFiles: 1 })
    expectNoTempFiles()
  })

  it('rule 4: fields read after the refusal obey the same rules: an unknown one is 400 UNKNOWN_PARAMETER before the route; a repeated one arrives twice', async () => {
    const unknown = await send(
      multipartBytes(B, [
        filePart('files', 'a.pdf', 'x'),
        filePart('files', 'big.pdf', Buffer.alloc(LIMIT + 1)),
        textPart('pipline_id', 'x'),
      ]),
    )
    expectFlat(unknown, 400, 'UNKNOWN_PARAMETER')
    expect(unknown.json.details).toEqual({ parameters: ['pipline_id'] })
    expect(standSeen).toBeNull()
    const repeated = await send(
      multipartBytes(B, [
        textPart('a', '1'),
        filePart('files', 'a.pdf', 'x'),
        filePart('files', 'big.pdf', Buffer.alloc(LIMIT + 1)),
        textPart('a', '2'),
      ]),
    )
    expectFlat(repeated, 413, 'FILE_TOO_LARGE')
    expect(standSeen!.fields).toEqual({ a: ['1', '2'] })
    standSeen = null
    const tooMany = await send(
      multipartBytes(B, [
        filePart('files', 'a.pdf', 'x'),
        filePart('files', 'big.pdf', Buffer.alloc(LIMIT + 1)),
        filePart('files', 'c.pdf', 'x'),
        filePart('files', 'd.pdf', 'x'),
      ]),
    )
    expectFlat(tooMany, 400, 'TOO_MANY_FILES')
    expect(standSeen).toBeNull()
    expectNoTempFiles()
  })

  it('rule 4: a body going on past the bound (maxRequestBodyBytes) is 413 with no file reaching the route, created_job_ids empty', async () => {
    const bound = maxRequestBodyBytes(STAND)
    const chunk = Buffer.alloc(64 * 1024, 7)
    const total = 100 * MB
    // Undeclared length (chunked): the API reads on until the bound.
    let produced = 0
    const chunked = await rawRequest({
      port: stand.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        'Transfer-Encoding: chunked',
      ],
      body: frame(Buffer.concat([multipartBytes(B, [filePart('files', 'a.pdf', 'x')], false), bigHead])),
      stream: () => (produced >= total ? null : ((produced += chunk.length), frame(chunk))),
    })
    expectFlat(chunked, 413, 'FILE_TOO_LARGE')
    expect(chunked.json.details).toMatchObject({ file_name: 'big.pdf', created_job_ids: [] })
    expect(chunked.headers.connection).toBe('close')
    expect(chunked.bodyBytesWritten).toBeGreaterThan(bound)
    expect(chunked.bodyBytesWritten).toBeLessThan(total / 2)
    expect(standSeen).toBeNull()
    // A declared length past the bound: answered as soon as the file passes the limit.
    const head = Buffer.concat([multipartBytes(B, [filePart('files', 'a.pdf', 'x')], false), bigHead])
    produced = 0
    const declared = await rawRequest({
      port: stand.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${head.length + total}`,
      ],
      body: head,
      stream: () => (produced >= total ? null : ((produced += chunk.length), chunk)),
    })
    expectFlat(declared, 413, 'FILE_TOO_LARGE')
    expect(declared.json.details).toMatchObject({ created_job_ids: [] })
    expect(declared.bodyBytesWritten).toBeLessThan(total / 2)
    expect(standSeen).toBeNull()
    expectNoTempFiles()
  })

  it('a refused first file (nothing stored before it) is still answered at once, without reading on', async () => {
    const chunk = Buffer.alloc(64 * 1024, 7)
    const total = 100 * MB
    let produced = 0
    const res = await rawRequest({
      port: stand.port,
      head: [
        'POST /upload HTTP/1.1',
        'Host: test',
        `Content-Type: multipart/form-data; boundary=${B}`,
        `Content-Length: ${bigHead.length + total}`,
      ],
      body: bigHead,
      stream: () => (produced >= total ? null : ((produced += chunk.length), chunk)),
    })
    expectFlat(res, 413, 'FILE_TOO_LARGE')
    expect(res.headers.connection).toBe('close')
    expect(res.bodyBytesWritten).toBeLessThan(total / 2)
    expect(standSeen).toMatchObject({ files: [] })
    expectNoTempFiles()
  })
})

async function waitFor(cond: () => boolean, ms = 3000) {
  const deadline = Date.now() + ms
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}
