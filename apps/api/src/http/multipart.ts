import { randomUUID } from 'node:crypto'
import { mkdirSync, WriteStream } from 'node:fs'
import { unlink } from 'node:fs/promises'
import path from 'node:path'
import type { EventEmitter } from 'node:events'
import { Stream } from 'node:stream'
import formidable, { type File, type Part } from 'formidable'
import type { Context, Middleware } from 'koa'
import { DomainError, isDomainError, LONE_SURROGATES } from '@quire/domain'
import { SNIFF_HEAD_BYTES } from '@quire/extraction'
import type { UploadedFile } from '@quire/core'
import { type BodyLimits, clientAborted, fromBodyError } from './body-errors.ts'
import { closeAfterResponse } from './connection.ts'
import { describeNames, type SubmitParameters, unknownParameters } from './submit-parameters.ts'

const MB = 1024 * 1024

/** Text fields per request: the forms take at most eight names; repeats are allowed, thousands are not. */
export const MAX_FIELDS = 200
/** All text fields of a request together (Form A `metadata` is the only long one). */
export const MAX_FIELDS_BYTES = 2 * MB
/** The header block of one part (Content-Disposition with its file name, Content-Type, ...). */
export const MAX_PART_HEADER_BYTES = 16 * 1024

/**
 * The largest body a request within every limit can have: `maxFiles` files at the per-file limit, the text fields at
 * their total limit, and the headers of each of those parts at theirs (room enough for the boundary lines too). With
 * the defaults (20 files of 100 MB, 200 fields, 2 MB of text) about 2,005 MB. After a refused file whose earlier
 * files stand, the rest of the body is read for its text fields up to this many body bytes in all: never more than
 * an acceptable request could have made the API read (see `earlierFilesStand`).
 */
export function maxRequestBodyBytes(l: {
  maxFileBytes: number
  maxFiles: number
  maxFields: number
  maxFieldsBytes: number
}): number {
  return l.maxFiles * l.maxFileBytes + l.maxFieldsBytes + (l.maxFiles + l.maxFields) * MAX_PART_HEADER_BYTES
}

export type MultipartOptions = {
  uploadDir: string
  /** Per file, not per request: a part is cut off (413 FILE_TOO_LARGE) as soon as it passes this many bytes. */
  maxFileBytes: number
  /** File parts per request (400 TOO_MANY_FILES). */
  maxFiles: number
  maxFields?: number
  maxFieldsBytes?: number
  /** The names the request may carry; any other is 400 UNKNOWN_PARAMETER. Undefined or null: any name. */
  parameters?: (ctx: Context) => SubmitParameters | null | undefined
  /**
   * A file over `maxFileBytes` after stored files of the file field refuses that file, not the request: the files
   * before it reach the route, with every text field of the request, and the 413 is the route's to answer once it
   * has processed them (refusedFileOf). The rest of the body is still read, for its text fields (a `pipeline_id` sent
   * last applies to the earlier files' jobs), storing no byte of the refused file or of any later file part (later
   * files never become jobs), and up to maxRequestBodyBytes of body in all: a body that goes on past that bound is
   * answered 413 with nothing reaching the route, since its parameters are not all known. A refused first file, and
   * any refusal without this option, is answered at once.
   */
  earlierFilesStand?: boolean
}

/**
 * A temporary file's write stream that keeps the first SNIFF_HEAD_BYTES written, so intake can tell the file's type
 * from them (sniffFileTypeFromHead) without opening the file again.
 */
class HeadKeepingWriteStream extends WriteStream {
  private readonly chunks: Buffer[] = []
  private kept = 0

  constructor(filePath: string, options: { flags: string }) {
    // @ts-expect-error fs.WriteStream takes createWriteStream's (path, options); its type names no constructor.
    super(filePath, options)
  }

  get head(): Buffer {
    return Buffer.concat(this.chunks, this.kept)
  }

  private keep(chunk: Buffer): void {
    if (this.kept >= SNIFF_HEAD_BYTES) return
    const part = chunk.subarray(0, SNIFF_HEAD_BYTES - this.kept)
    this.chunks.push(part)
    this.kept += part.length
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.keep(chunk)
    super._write(chunk, encoding, callback)
  }

  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (error?: Error | null) => void,
  ): void {
    for (const { chunk } of chunks) this.keep(chunk)
    super._writev!(chunks, callback)
  }
}

type TempFile = { path: string; stream: HeadKeepingWriteStream }
type Parsed = {
  fields: Record<string, string[]>
  files: Record<string, File[]>
  textNames: string[]
  fileNames: string[]
  /** With `earlierFilesStand`: the file part that passed the size limit; `files` are those stored before it. */
  refused?: DomainError
}

/**
 * multipart/form-data bodies (POST /v1/jobs), each file part streamed to its own temporary file (never whole in
 * memory) with the per-file limit enforced while the part streams. On success `ctx.request.body` holds the text
 * fields and `ctx.request.files` the files (a name sent once is a single value, as koa-body gives it; use fieldsOf /
 * filesOf).
 *
 * Every failure is a flat 4xx with a stable code (see README, "Bad input"). Whatever happens, every temporary file
 * the request created is closed and removed before the response is sent — files moved to blob storage by the route
 * are gone already — and a response decided while the client is still sending closes the connection cleanly
 * (closeAfterResponse) instead of reading the rest of a rejected upload.
 */
export function multipartMiddleware(opts: MultipartOptions): Middleware {
  const uploadDir = path.resolve(opts.uploadDir)
  mkdirSync(uploadDir, { recursive: true })
  const limits: BodyLimits = {
    maxFileMb: Math.round((opts.maxFileBytes / MB) * 100) / 100,
    maxFiles: opts.maxFiles,
    maxFields: opts.maxFields ?? MAX_FIELDS,
    maxFieldsBytes: opts.maxFieldsBytes ?? MAX_FIELDS_BYTES,
  }
  return async (ctx, next) => {
    if (!ctx.is('multipart/form-data'))
      throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'send files as multipart/form-data')
    const temps: TempFile[] = []
    try {
      let parsed: Parsed
      try {
        parsed = await parseMultipart(ctx, uploadDir, opts, limits, temps)
      } catch (err) {
        // Stop reading the rest of a rejected body; closeAfterResponse decides what happens to it.
        if (!ctx.req.complete) ctx.req.pause()
        throw isDomainError(err) ? err : (fromBodyError(err, limits) ?? err)
      }
      if (parsed.refused) {
        // The route answers it after the files before it. (A refused first file ended the upload: nothing after it
        // is read.)
        if (!ctx.req.complete) ctx.req.pause()
        refusedFiles.set(ctx.request, parsed.refused)
      }
      const accepted = opts.parameters?.(ctx)
      if (accepted) {
        const unknown = unknownParameters(accepted, {
          text: parsed.textNames,
          files: parsed.fileNames,
          query: Object.keys(ctx.query),
        })
        if (unknown.length > 0) {
          const allowed = [`${accepted.fileField} (file parts)`, ...accepted.text].join(', ')
          const plural = unknown.length > 1 ? 's' : ''
          throw new DomainError(
            'UNKNOWN_PARAMETER',
            `unknown parameter${plural} ${describeNames(unknown)}; this endpoint accepts ${allowed}` +
              (accepted.query.length
                ? ' (text parameters also in the query string)'
                : ' (as form fields, not in the query string)'),
            { parameters: unknown.slice(0, 50) },
          )
        }
      }
      ctx.request.body = singleOrArray(parsed.fields)
      ctx.request.files = singleOrArray(parsed.files)
      await next()
    } finally {
      const moved = movedFiles.get(ctx.request)
      await removeTempFiles(moved ? temps.filter((t) => !moved.has(t.path)) : temps)
      // formidable's objects, dead by now and often already old, still reach this list through the stream factory
      // in their options: emptied, it holds no write stream into the next young-generation collection.
      temps.length = 0
      closeAfterResponse(ctx)
    }
  }
}

function parseMultipart(
  ctx: Context,
  uploadDir: string,
  opts: MultipartOptions,
  limits: BodyLimits,
  temps: TempFile[],
): Promise<Parsed> {
  const req = ctx.req
  // A client that left while the key was checked: its request stream is destroyed already, emits nothing more, and
  // formidable's parse would wait for it forever (the handler, its context and its connection's state never freed).
  if (req.destroyed) return Promise.reject(clientAborted())
  const form = formidable({
    uploadDir,
    // Our own per-part byte count (below) fires first; these are formidable's backstops.
    maxFileSize: opts.maxFileBytes,
    maxTotalFileSize: opts.maxFileBytes * opts.maxFiles,
    maxFiles: opts.maxFiles,
    maxFields: limits.maxFields,
    maxFieldsSize: limits.maxFieldsBytes,
    allowEmptyFiles: true, // an empty `files` part is the route's 400 MISSING_FILE
    minFileSize: 0,
    keepExtensions: false, // temporary names are random; nothing the client sent reaches a path
    // A random UUID as the temporary name: formidable's own (a cuid2, SHA-3 in JavaScript) cost 0.1 ms per request.
    filename: randomName,
    // Our own write streams, so that every temporary file can be closed, awaited and removed, even a half-written one.
    fileWriteStreamHandler: tempFileStreams(temps),
  })
  const internal = form as unknown as {
    _error(err: unknown): void
    error: unknown
    _parser?: unknown
    bytesReceived?: number
  }
  const fail = (err: DomainError) => {
    if (internal.error) return
    internal._error(err)
    req.pause()
  }
  guardPartHeaders(form, internal, fail)

  const textNames: string[] = []
  const fileNames: string[] = []
  let fileParts = 0
  let storedParts = 0
  // earlierFilesStand: a file refused after stored ones (its temporary file, when it had one); the rest of the body is
  // then read for its text fields only, up to drainBound body bytes in all (see MultipartOptions).
  let refused: DomainError | undefined
  let refusedFile: File | undefined
  let drainOverrun = false
  const drainBound = maxRequestBodyBytes({
    ...opts,
    maxFields: limits.maxFields!,
    maxFieldsBytes: limits.maxFieldsBytes!,
  })
  const checkDrain = (bodyBytes: number) => {
    if (!refused || drainOverrun || bodyBytes <= drainBound) return
    drainOverrun = true
    // Its text parameters are not all known, so none of the earlier files may become a job under the wrong ones.
    fail(
      new DomainError(
        'FILE_TOO_LARGE',
        `${refused.message}; the request goes on past ${Math.floor(drainBound / MB)} MB, so the rest of it was not ` +
          'read and no job was created',
        { ...refused.details, created_job_ids: [] },
      ),
    )
  }
  form.on('progress', (received: number) => checkDrain(received))
  let begun: File | undefined
  form.on('fileBegin', (_name: string, file: File) => {
    begun = file
  })
  const handle = form._handlePart.bind(form) as (part: Part) => Promise<void> | void
  // formidable awaits onPart inside an async stream listener: anything thrown or rejected there escapes every handler
  // and ends the process. Every part therefore goes through this guard, which turns any failure into a 400.
  const guarded = (part: Part): Promise<void> =>
    Promise.resolve()
      .then(() => onPart(part))
      .catch((err: unknown) => {
        fail(isDomainError(err) ? err : new DomainError('MALFORMED_REQUEST', 'a multipart part could not be read'))
      })
  form.onPart = guarded as typeof form.onPart
  const onPart = (part: Part): Promise<void> | void => {
    if (internal.error) return undefined
    if (!part.name) {
      fail(
        new DomainError(
          'MALFORMED_REQUEST',
          'a multipart part has no name (Content-Disposition: form-data; name="...")',
        ),
      )
      return undefined
    }
    const starName = extendedFileName(
      (part as Part & { headers?: Record<string, string> }).headers?.['content-disposition'],
    )
    if (starName !== null) part.originalFilename = starName
    if (!isFilePart(part)) {
      part.mimetype = null // a text field, even when it declares text/plain
      // formidable has already undone the transfer encoding (7bit, 8bit, binary, base64) and would now pass the header
      // value to StringDecoder as a character set, which throws for `7bit`; the bytes left are UTF-8 text.
      ;(part as Part & { transferEncoding?: string }).transferEncoding = 'utf-8'
      textNames.push(part.name)
      return handle(part)
    }
    part.mimetype ||= 'application/octet-stream'
    fileParts += 1
    fileNames.push(part.name)
    if (fileParts > opts.maxFiles) {
      fail(
        new DomainError('TOO_MANY_FILES', `at most ${opts.maxFiles} files per request`, { max_files: opts.maxFiles }),
      )
      return undefined
    }
    // After a refused file: counted and named as before (TOO_MANY_FILES, UNKNOWN_PARAMETER), its bytes discarded;
    // it never becomes a job.
    if (refused) return undefined
    const accepted = opts.parameters?.(ctx)
    const earlierStored = storedParts
    // formidable stores what this stand-in passes on: the part's bytes up to the limit, never the chunk that crosses
    // it, and none after a refusal.
    const stored = accepted && part.name !== accepted.fileField ? null : standIn(part)
    let file: File | undefined
    let bytes = 0
    let cut = false
    part.on('data', (chunk: Buffer) => {
      if (cut) return
      bytes += chunk.length
      if (bytes <= opts.maxFileBytes) {
        stored?.emit('data', chunk)
        return
      }
      cut = true
      const tooLarge = new DomainError(
        'FILE_TOO_LARGE',
        `a file exceeds the upload limit of ${limits.maxFileMb} MB per file`,
        { max_file_mb: limits.maxFileMb, file_name: sanitiseFileName(part.originalFilename ?? '') },
      )
      if (!opts.earlierFilesStand || earlierStored === 0) {
        fail(tooLarge)
        return
      }
      refused = tooLarge
      refusedFile = file
      // formidable closes the temporary file here (as if the part had ended) and lists it: left out and removed
      // below. The rest of the part is read and discarded.
      stored?.emit('end')
      const declared = Number(req.headers['content-length'])
      checkDrain(Math.max(Number.isSafeInteger(declared) ? declared : 0, internal.bytesReceived ?? 0))
    })
    part.on('end', () => {
      if (!cut) stored?.emit('end')
    })
    if (!stored) return undefined // counted and size-checked, never stored
    storedParts += 1
    return Promise.resolve(handle(stored)).then(() => {
      file = begun // formidable began this part's file while handling it
    })
  }

  // Every complete part, in one place for success and for a refusal that leaves the earlier parts standing. Maps,
  // not objects: a part may be named `constructor` or `__proto__`.
  const fieldsSoFar = new Map<string, string[]>()
  const filesSoFar = new Map<string, File[]>()
  const add = <T>(map: Map<string, T[]>, name: string, value: T) => {
    const list = map.get(name)
    if (list) list.push(value)
    else map.set(name, [value])
  }
  form.on('field', (name: string, value: string) => add(fieldsSoFar, name, value))
  // The refused file's temporary file goes now, not with the others after the response.
  let refusedRemoved: Promise<void> = Promise.resolve()
  form.on('file', (name: string, file: File) => {
    const head = temps.find((t) => t.path === file.filepath)?.stream.head
    if (head) fileHeads.set(file, head)
    if (file !== refusedFile) add(filesSoFar, name, file)
    else refusedRemoved = unlink(file.filepath).catch(() => {})
  })
  // formidable lists a file when its write finishes, which can differ from the order the parts arrived in; the
  // spec answers files in upload order, so restore it from the order the write streams were opened.
  const readSoFar = (refusal?: DomainError): Parsed => {
    const arrival = new Map(temps.map((t, i) => [t.path, i]))
    const byArrival = (a: File, b: File) => (arrival.get(a.filepath) ?? 0) - (arrival.get(b.filepath) ?? 0)
    const files = [...filesSoFar].map(([name, list]) => [name, [...list].sort(byArrival)] as const)
    const fields = Object.fromEntries(fieldsSoFar)
    return { fields, files: Object.fromEntries(files), textNames, fileNames, refused: refusal }
  }
  return form
    .parse(req)
    .then(
      () => refusedRemoved.then(() => readSoFar(refused)),
      (err: unknown) => {
        // A refused first file (nothing stored before it) ends the upload at once; the route answers it.
        if (drainOverrun || !(opts.earlierFilesStand && isDomainError(err) && err.code === 'FILE_TOO_LARGE')) throw err
        return readSoFar(err)
      },
    )
    .finally(() => releaseRequest(form))
}

/**
 * Once a body is parsed (or refused), formidable's objects for it hold nothing of the request any more: its listeners
 * and ours, the request, the opened files. V8's young-generation collections keep whatever an older,
 * already dead object still points to; formidable's objects were such, and through our listeners they kept each
 * request's whole context alive into the old generation (bench/README.md, "2026-11-29 19:50"). Events after this
 * point (a late `error` of a refused body's request) are dropped, as the request has its answer already.
 */
function releaseRequest(form: ReturnType<typeof formidable>): void {
  const f = form as unknown as {
    _parser: EventEmitter | null
    req: unknown
    headers: unknown
    onPart: unknown
    openedFiles: unknown[]
    _plugins: unknown[]
  } & EventEmitter
  f.removeAllListeners().on('error', () => {})
  // The parser stays: formidable may still resume it after a part it was waiting on.
  f._parser?.removeAllListeners().on('error', () => {})
  f.onPart = () => {}
  f.req = null
  f.headers = null
  f.openedFiles = []
  f._plugins = []
}

const randomName = () => randomUUID()

/**
 * The write stream formidable stores each file part with, listed in `temps`. Made outside parseMultipart so that it
 * holds `temps` alone: formidable keeps it in its options (copied into its parser and files), and a closure made
 * inside parseMultipart would hold that function's every variable, the request's context among them (see
 * releaseRequest).
 */
function tempFileStreams(temps: TempFile[]): (file: unknown) => HeadKeepingWriteStream {
  return (file) => {
    const filepath = (file as { filepath: string }).filepath
    const stream = new HeadKeepingWriteStream(filepath, { flags: 'wx' })
    temps.push({ path: filepath, stream })
    return stream
  }
}

/**
 * formidable accumulates a part's header lines in memory without a bound; a part whose headers never end would grow
 * one string until the process runs out of memory. Count them on the multipart parser it creates.
 */
function guardPartHeaders(
  form: ReturnType<typeof formidable>,
  internal: { _parser?: unknown },
  fail: (err: DomainError) => void,
) {
  let hooked = false
  form.on('plugin' as never, () => {
    const parser = internal._parser as
      | { on?: (ev: string, fn: (e: { name: string; start?: number; end?: number }) => void) => void }
      | undefined
    if (hooked || !parser || typeof parser.on !== 'function') return
    hooked = true
    let headerBytes = 0
    parser.on('data', ({ name, start, end }) => {
      if (name === 'partBegin') headerBytes = 0
      else if (name === 'headerField' || name === 'headerValue') {
        headerBytes += (end ?? 0) - (start ?? 0)
        if (headerBytes > MAX_PART_HEADER_BYTES) {
          fail(
            new DomainError(
              'MALFORMED_REQUEST',
              `the headers of a multipart part exceed ${MAX_PART_HEADER_BYTES / 1024} kB`,
            ),
          )
        }
      }
    })
  })
}

/** A stand-in for a file part, handed to formidable to store: it passes on only what it is given. */
function standIn(part: Part): Part {
  const s = Object.assign(new Stream(), {
    readable: true,
    name: part.name,
    originalFilename: part.originalFilename,
    mimetype: part.mimetype,
    headers: (part as Part & { headers?: unknown }).headers,
    transferEncoding: (part as Part & { transferEncoding?: string }).transferEncoding,
  })
  return s as Part
}

/** A part is a file when it names a file, or declares a content type other than text/plain (RFC 7578 §4.4). */
function isFilePart(part: Part): boolean {
  if (part.originalFilename !== null && part.originalFilename !== undefined) return true
  const type = (part.mimetype ?? '').trim().toLowerCase()
  return type !== '' && !type.startsWith('text/plain')
}

/** RFC 5987/6266 `filename*=charset'lang'pct-encoded`, preferred over `filename=` when present; null otherwise. */
export function extendedFileName(disposition: string | undefined): string | null {
  if (!disposition) return null
  const m = /(?:^|;)\s*filename\*\s*=\s*([^;]*)/i.exec(disposition)
  if (!m) return null
  const value = m[1]!.trim().replace(/^"(.*)"$/, '$1')
  const parts = /^([^']*)'[^']*'(.*)$/.exec(value)
  const charset = (parts?.[1] ?? 'utf-8').toLowerCase()
  const encoded = parts ? parts[2]! : value
  const bytes: number[] = []
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i]!
    if (c === '%' && /^[0-9a-fA-F]{2}$/.test(encoded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      bytes.push(...Buffer.from(c, 'utf8'))
    }
  }
  return Buffer.from(bytes).toString(charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8')
}

const movedFiles = new WeakMap<object, Set<string>>()
const refusedFiles = new WeakMap<object, DomainError>()

/**
 * The file part refused while it streamed (413 FILE_TOO_LARGE) on a body whose earlier files stand: the route
 * processes the files before it, then answers this.
 */
export function refusedFileOf(ctx: { request: object }): DomainError | undefined {
  return refusedFiles.get(ctx.request)
}

/**
 * Tells the middleware that a route moved this upload's temporary file into blob storage (a job was created from
 * it), so it is not removed again: one failed system call less per submission.
 */
export function tempFileMoved(ctx: { request: object }, f: File): void {
  const set = movedFiles.get(ctx.request) ?? new Set<string>()
  set.add(f.filepath)
  movedFiles.set(ctx.request, set)
}

/** Closes every temporary write stream (waiting for a pending open, so no file appears afterwards) and removes it. */
async function removeTempFiles(temps: TempFile[]): Promise<void> {
  await Promise.all(
    temps.map(async ({ path: p, stream }) => {
      if (!stream.closed) {
        const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()))
        stream.on('error', () => {})
        stream.destroy()
        await closed
      }
      // One system call: the file is ours and a regular file, or gone (moved to blob storage by the route).
      await unlink(p).catch(() => {})
    }),
  )
}

function singleOrArray<T>(record: Record<string, T[]>): Record<string, T | T[]> {
  const out: Record<string, T | T[]> = {}
  for (const key of Object.keys(record)) {
    const v = record[key]
    if (v !== undefined) out[key] = v.length === 1 ? v[0]! : v
  }
  return out
}

/** Every uploaded file of the request, whatever its field. */
export function allFilesOf(ctx: { request: { files?: Record<string, File | File[]> } }): File[] {
  return Object.values(ctx.request.files ?? {}).flat()
}

/** koa-body gives a single File or an array; callers always get an array. */
export function filesOf(ctx: { request: { files?: Record<string, File | File[]> } }, field: string): File[] {
  const v = ctx.request.files?.[field]
  return v ? (Array.isArray(v) ? v : [v]) : []
}

/** The first bytes of each stored upload, kept while it streamed to disk (HeadKeepingWriteStream). */
const fileHeads = new WeakMap<File, Buffer>()

export const toUploaded = (f: File): UploadedFile => ({
  head: fileHeads.get(f),
  tempPath: f.filepath,
  fileName: sanitiseFileName(f.originalFilename ?? ''),
  sizeBytes: f.size,
})

const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * A client-sent file name made safe to store and echo: the last path segment only (`../../etc/passwd` → `passwd`,
 * `C:\x\y.pdf` → `y.pdf`), without control or bidi-override characters, at most 255 characters (never cutting one
 * in half), and `upload` when nothing is left. Names never reach the file system: temporary files and blobs have
 * generated names.
 */
export function sanitiseFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? ''
  const clean = base.replace(CONTROL_OR_BIDI, '').replace(LONE_SURROGATES, '\uFFFD').trim()
  const short = Array.from(clean).slice(0, 255).join('')
  return short === '' || short === '.' || short === '..' ? 'upload' : short
}

/** Text fields as one record of strings (a repeated field keeps its first value). */
export function fieldsOf(ctx: { request: { body?: unknown } }): Record<string, string | string[]> {
  const b = ctx.request.body
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, string | string[]>) : {}
}
