// Generated HTTP requests for the fuzz scenario (fast-check arbitraries): multipart submissions with odd boundaries,
// part encodings, HTTP transfer and content encodings, header sizes, field counts and non-UTF-8 names; JSON bodies with
// NUL characters, lone surrogates, invalid UTF-8 and deep nesting; odd paths, query strings and headers. Each request
// is the exact bytes written to a socket, so nothing in between tidies them up.
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'

export type FuzzTarget = {
  keyA: string
  keyB: string
  adminToken: string
  /** A small valid PDF: some generated submissions are valid and become jobs. */
  pdf: Buffer
  /** Ids that exist (a job, a pipeline, a webhook, a document) so some paths reach real rows. */
  ids: string[]
}

export type FuzzRequest = {
  kind: string
  head: string[]
  body: Buffer
  /** The client ends its side before the declared body is complete: no answer is a legitimate outcome. */
  truncated: boolean
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1')
/** Percent-encodes the UTF-8 bytes of any string (lone surrogates included, which encodeURIComponent refuses). */
const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('')
const bchars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?"

const oddString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.uint8Array({ maxLength: 40 }).map(latin1),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\ud800', '\uffff', '../../etc/passwd', 'C:\\x\\y.pdf', '"', ';', '%00'),
)

const boundaryArb = fc.oneof(
  fc.string({ unit: fc.constantFrom(...bchars.split('')), minLength: 1, maxLength: 70 }),
  fc.string({ unit: fc.constantFrom(...`${bchars} `.split('')), minLength: 1, maxLength: 70 }),
  fc.integer({ min: 71, max: 4000 }).map((n) => 'b'.repeat(n)),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map(latin1),
  fc.constantFrom('-', '--', '"', 'a"b', 'x;y', '\t', 'é'),
)

const contentTypeArb = (boundary: string) =>
  fc.constantFrom(
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary="${boundary.replace(/"/g, '\\"')}"`,
    `Multipart/Form-Data; charset=latin1; BOUNDARY=${boundary}`,
    `multipart/form-data; boundary=${boundary}; boundary=other`,
    'multipart/form-data',
    `multipart/mixed; boundary=${boundary}`,
    `multipart/form-data; boundary=${boundary}x`,
    `application/x-www-form-urlencoded; boundary=${boundary}`,
  )

type PartSpec = {
  name: string
  fileName: string | null
  fileNameStar: boolean
  type: string | null
  cte: string | null
  pad: number
  content: 'random' | 'pdf' | 'text-nul' | 'boundary-inside' | 'empty'
  random: Uint8Array
  text: string
}

const partArb: fc.Arbitrary<PartSpec> = fc.record({
  name: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('file', 'files', 'pipeline_id', 'metadata', 'schema_id', 'source_tag') },
    { weight: 1, arbitrary: fc.constantFrom('mode', 'priority', 'run_kind', 'environment', 'version') },
    { weight: 2, arbitrary: oddString },
  ),
  fileName: fc.option(oddString, { nil: null }),
  fileNameStar: fc.boolean(),
  type: fc.option(fc.constantFrom('application/pdf', 'text/plain', 'application/octet-stream', 'x/y; a="', ''), {
    nil: null,
  }),
  cte: fc.option(
    fc.constantFrom('binary', '7bit', '8bit', 'base64', 'BASE64', 'quoted-printable', 'x-unknown', 'gzip', ''),
    { nil: null },
  ),
  pad: fc.oneof(
    { weight: 6, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
  ),
  content: fc.constantFrom('random', 'pdf', 'text-nul', 'boundary-inside', 'empty'),
  random: fc.uint8Array({ maxLength: 1500 }),
  text: fc.string({ unit: 'binary', maxLength: 200 }),
})

function partBytes(p: PartSpec, boundary: string, pdf: Buffer, eol: string): Buffer {
  let disposition = `Content-Disposition: form-data; name="${p.name}"`
  if (p.fileName !== null) {
    disposition += p.fileNameStar ? `; filename*=UTF-8''${pct(p.fileName)}` : `; filename="${p.fileName}"`
  }
  const headers = [disposition]
  if (p.type !== null) headers.push(`Content-Type: ${p.type}`)
  if (p.cte !== null) headers.push(`Content-Transfer-Encoding: ${p.cte}`)
  if (p.pad) headers.push(`X-Pad: ${'p'.repeat(p.pad)}`)
  let content: Buffer
  switch (p.content) {
    case 'random':
      content = Buffer.from(p.random)
      break
    case 'pdf':
      content = p.cte?.toLowerCase() === 'base64' ? Buffer.from(pdf.toString('base64')) : pdf
      break
    case 'text-nul':
      content = Buffer.from(`${p.text}\u0000${p.text}`, 'utf8')
      break
    case 'boundary-inside':
      content = Buffer.from(`before\r\n--${boundary}\r\nafter`, 'latin1')
      break
    case 'empty':
      content = Buffer.alloc(0)
  }
  return Buffer.concat([
    Buffer.from(`--${boundary}${eol}${headers.join(eol)}${eol}${eol}`, 'latin1'),
    content,
    Buffer.from(eol, 'latin1'),
  ])
}

type Framing = 'length' | 'chunked' | 'short-length' | 'long-length' | 'none'
const framingArb: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Framing>('length') },
  { weight: 3, arbitrary: fc.constant<Framing>('chunked') },
  { weight: 1, arbitrary: fc.constantFrom<Framing>('short-length', 'long-length', 'none') },
)
const encodingArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'gzip-lie', 'deflate', 'br', 'x-unknown', 'identity') },
)

/** Request line + headers + framed body, as bytes on the wire. */
function frame(
  kind: string,
  method: string,
  target: string,
  headers: string[],
  rawBody: Buffer,
  framing: Framing,
  encoding: string | null,
  chunkSize: number,
): FuzzRequest {
  let body = rawBody
  const head = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers]
  if (encoding === 'gzip') {
    body = gzipSync(body)
    head.push('Content-Encoding: gzip')
  } else if (encoding === 'gzip-lie') head.push('Content-Encoding: gzip')
  else if (encoding) head.push(`Content-Encoding: ${encoding}`)
  let truncated = false
  if (framing === 'chunked') {
    head.push('Transfer-Encoding: chunked')
    const chunks: Buffer[] = []
    const size = Math.max(1, chunkSize)
    for (let i = 0; i < body.length; i += size) {
      const c = body.subarray(i, i + size)
      chunks.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'))
    }
    chunks.push(Buffer.from('0\r\n\r\n'))
    body = Buffer.concat(chunks)
  } else if (framing === 'length') head.push(`Content-Length: ${body.length}`)
  else if (framing === 'short-length') head.push(`Content-Length: ${Math.floor(body.length / 2)}`)
  else if (framing === 'long-length') {
    head.push(`Content-Length: ${body.length + 1 + chunkSize}`)
    truncated = true
  } else if (body.length) truncated = true // no length: the server reads nothing or waits
  return { kind, head, body, truncated }
}

const keyArb = (t: FuzzTarget) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(t.keyA, t.keyB) },
    { weight: 1, arbitrary: fc.constantFrom('', 'qk_nope', `${t.keyA}x`, 'ü', 'a\tb') },
  )

function multipartArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      key: keyArb(t),
      boundary: boundaryArb,
      parts: fc.oneof(
        { weight: 8, arbitrary: fc.array(partArb, { maxLength: 8 }) },
        { weight: 1, arbitrary: fc.array(partArb, { minLength: 18, maxLength: 30 }) },
      ),
      manyFields: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(400) }),
      eol: fc.constantFrom('\r\n', '\r\n', '\r\n', '\n'),
      closing: fc.constantFrom('close', 'close', 'close', 'none', 'epilogue', 'preamble'),
      query: fc.oneof(
        { weight: 8, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('?mode=sync', '?schema_id=%00', '?x=%zz', '?mode=async&mode=sync') },
      ),
      framing: framingArb,
      encoding: encodingArb,
      chunkSize: fc.integer({ min: 1, max: 5000 }),
    })
    .chain((r) => contentTypeArb(r.boundary).map((contentType) => ({ ...r, contentType })))
    .map((r) => {
      const pieces: Buffer[] = []
      if (r.closing === 'preamble') pieces.push(Buffer.from('preamble text\r\n'))
      for (const p of r.parts) pieces.push(partBytes(p, r.boundary, t.pdf, r.eol))
      for (let i = 0; i < r.manyFields; i++) {
        pieces.push(Buffer.from(`--${r.boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`))
      }
      if (r.closing !== 'none') pieces.push(Buffer.from(`--${r.boundary}--${r.eol}`, 'latin1'))
      if (r.closing === 'epilogue') pieces.push(Buffer.from('epilogue \u0000 bytes'))
      const headers = [`Content-Type: ${r.contentType}`]
      if (r.key) headers.push(`X-API-Key: ${r.key}`)
      return frame(
        'multipart',
        'POST',
        `/v1/jobs${r.query}`,
        headers,
        Buffer.concat(pieces),
        r.framing,
        r.encoding,
        r.chunkSize,
      )
    })
}

/** JSON text with NULs, lone surrogates, deep nesting, invalid UTF-8 or truncation. */
const jsonTextArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc
    .dictionary(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 30 }))
    .map((d) => Buffer.from(JSON.stringify(d))),
  fc
    .record({ name: oddString, definition: fc.jsonValue({ maxDepth: 3 }), url: oddString, events: fc.array(oddString) })
    .map((d) => Buffer.from(JSON.stringify(d))),
  fc.integer({ min: 50, max: 200_000 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)),
  fc.integer({ min: 50, max: 100_000 }).map((n) => Buffer.from(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`)),
  fc
    .integer({ min: 50, max: 20_000 })
    .map((n) => Buffer.from(`{"name":"x","definition":${'{"schemas":'.repeat(n)}{}${'}'.repeat(n)}}`)),
  fc
    .constantFrom(
      '{"name":"a\\u0000b","definition":{}}',
      '{"a\\u0000":1}',
      '{"name":"\\ud800"}',
      '{"name":1e400}',
      '{"__proto__":{"x":1},"constructor":{"prototype":{}}}',
      '{"action":"approve","data":{"\\u0000":{"value":1}}}',
      '{"status":"active","x":',
      '',
      'null',
      '"str"',
      '[]',
    )
    .map((s) => Buffer.from(s)),
  fc
    .uint8Array({ maxLength: 300 })
    .map((b) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(b), Buffer.from('"}')])),
)

function jsonArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const targets: [string, string][] = [
    ['POST', '/v1/pipelines'],
    ['POST', '/v1/webhooks'],
    ['POST', '/v1/jobs'],
    ['PATCH', `/v1/webhooks/${t.ids[2] ?? 'wh_x'}`],
    ['POST', `/v1/documents/${t.ids[3] ?? 'doc_x'}/review`],
    ['POST', `/v1/pipelines/${t.ids[1] ?? 'parse'}/versions`],
    ['POST', '/admin/v1/workspaces'],
    ['PATCH', '/admin/v1/workspaces/ws_x'],
    ['POST', '/admin/v1/workspaces/ws_x/credits'],
  ]
  return fc
    .record({
      target: fc.constantFrom(...targets),
      key: keyArb(t),
      body: jsonTextArb,
      contentType: fc.constantFrom(
        'application/json',
        'application/json',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'text/plain',
        'application/vnd.api+json',
        '',
      ),
      framing: framingArb,
      encoding: encodingArb,
      chunkSize: fc.integer({ min: 1, max: 5000 }),
    })
    .map((r) => {
      const [method, path] = r.target
      const headers = path.startsWith('/admin')
        ? [`Authorization: Bearer ${t.adminToken}`]
        : r.key
          ? [`X-API-Key: ${r.key}`]
          : []
      if (r.contentType) headers.push(`Content-Type: ${r.contentType}`)
      return frame('json', method, path, headers, r.body, r.framing, r.encoding, r.chunkSize)
    })
}

const pathSegmentArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }).map(pct),
  fc.constantFrom('%', '%zz', '%00', '%C0%80', '%ED%A0%80', '..%2F..', 'a%2Fb', '%FF%FE', '\u00e9'),
  fc
    .uint8Array({ minLength: 1, maxLength: 20 })
    .map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('')),
  fc.integer({ min: 100, max: 7000 }).map((n) => 'x'.repeat(n)),
)

function urlArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const query = fc
    .array(
      fc.tuple(
        fc.constantFrom('limit', 'cursor', 'status', 'page', 'page_size', 'include', 'form', 'created_after', 'job_id'),
        pathSegmentArb,
      ),
      { maxLength: 6 },
    )
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''))
  return fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
      base: fc.constantFrom(
        '/v1/jobs',
        '/v1/jobs/',
        '/v1/pipelines/',
        '/v1/webhooks/',
        '/v1/documents/',
        '/v1/credits/ledger',
        '/v1/openapi.json',
        '/admin/v1/workspaces/',
        '/admin/queues/',
        '/readyz',
      ),
      segment: fc.oneof(fc.constant(''), pathSegmentArb, fc.constantFrom(...(t.ids.length ? t.ids : ['x']))),
      suffix: fc.constantFrom('', '', '/cancel', '/deliveries', '/versions/1/publish', '/review', '/rotate'),
      query,
      key: keyArb(t),
    })
    .map((r) =>
      frame(
        'url',
        r.method,
        `${r.base}${r.segment}${r.segment ? r.suffix : ''}${r.query}`,
        r.base.startsWith('/admin') ? [`Authorization: Bearer ${t.adminToken}`] : r.key ? [`X-API-Key: ${r.key}`] : [],
        Buffer.alloc(0),
        'length',
        null,
        1,
      ),
    )
}

function headersArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const token = fc.string({
    unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz-_0123456789'.split('')),
    minLength: 1,
    maxLength: 30,
  })
  return fc
    .record({
      count: fc.nat(120),
      name: token,
      value: fc.oneof(fc.string({ maxLength: 60 }), fc.uint8Array({ maxLength: 60 }).map(latin1)),
      big: fc.oneof(
        { weight: 3, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }) },
      ),
      key: fc.oneof(keyArb(t), fc.uint8Array({ maxLength: 40 }).map(latin1)),
      twoKeys: fc.boolean(),
      path: fc.constantFrom('/v1/jobs', '/v1/credits', '/v1/pipelines', '/healthz', '/admin/v1/workspaces/ws_x'),
    })
    .map((r) => {
      const headers: string[] = []
      for (let i = 0; i < r.count; i++) headers.push(`X-${r.name}-${i}: ${r.value.replace(/[\r\n]/g, '')}`)
      if (r.big) headers.push(`X-Big: ${'b'.repeat(r.big)}`)
      headers.push(`X-API-Key: ${r.key.replace(/[\r\n]/g, '')}`)
      if (r.twoKeys) headers.push(`X-API-Key: ${t.keyB}`)
      if (r.path.startsWith('/admin')) headers.push(`Authorization: Bearer ${r.key.replace(/[\r\n]/g, '')}`)
      return frame('headers', 'GET', r.path, headers, Buffer.alloc(0), 'length', null, 1)
    })
}

/** Well-formed submissions with odd but legal choices (boundary, names, part and transfer encodings): real jobs. */
function validSubmitArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      form: fc.constantFrom('A', 'B'),
      boundary: fc.string({ unit: fc.constantFrom(...bchars.split('')), minLength: 1, maxLength: 70 }),
      fileName: oddString,
      base64: fc.boolean(),
      framing: fc.constantFrom<Framing>('length', 'chunked'),
      chunkSize: fc.integer({ min: 1, max: 3000 }),
    })
    .map((r) => {
      const file: PartSpec = {
        name: r.form === 'A' ? 'file' : 'files',
        fileName: r.fileName,
        fileNameStar: false,
        type: 'application/pdf',
        cte: r.base64 ? 'base64' : null,
        pad: 0,
        content: 'pdf',
        random: new Uint8Array(),
        text: '',
      }
      const pieces = [partBytes(file, r.boundary, t.pdf, '\r\n')]
      if (r.form === 'A') {
        pieces.unshift(
          Buffer.from(`--${r.boundary}\r\nContent-Disposition: form-data; name="pipeline_id"\r\n\r\nparse\r\n`),
        )
      }
      pieces.push(Buffer.from(`--${r.boundary}--\r\n`))
      const headers = [
        `Content-Type: multipart/form-data; boundary="${r.boundary}"`,
        `X-API-Key: ${r.form === 'A' ? t.keyA : t.keyB}`,
      ]
      return frame('valid-submit', 'POST', '/v1/jobs', headers, Buffer.concat(pieces), r.framing, null, r.chunkSize)
    })
}

export function requestArb(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 5, arbitrary: multipartArb(t) },
    { weight: 1, arbitrary: validSubmitArb(t) },
    { weight: 3, arbitrary: jsonArb(t) },
    { weight: 2, arbitrary: urlArb(t) },
    { weight: 1, arbitrary: headersArb(t) },
  )
}
