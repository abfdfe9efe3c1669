import { open } from 'node:fs/promises'
import { inflateSync } from 'node:zlib'

/**
 * A PDF's page count read from its structure alone: `startxref` at the tail, the cross-reference sections it leads to
 * (tables or streams, newest first along /Prev), the newest trailer's /Root, and that catalog's /Pages /Count. Only
 * the byte ranges these need are read, never the whole file, and never the pages themselves.
 *
 * Returns null whenever anything is odd (no startxref, an offset that does not land on what it names, an encrypted
 * or hybrid file, a /Count that is not a positive integer or is above `maxPages`, a linearized file whose /N
 * disagrees, a read over the bounds below): the caller then asks pdf.js, so damaged and odd files get exactly the
 * answer they got before. It never throws for a file's content.
 */
export async function readPdfPageCount(path: string, maxPages: number): Promise<number | null> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    return await countOrNull(await FileSource.open(handle, size), maxPages)
  } finally {
    await handle.close()
  }
}

/**
 * readPdfPageCount's answer from the whole file already in memory (an upload small enough to be kept whole as it
 * streamed to disk): the same reader, without opening the file.
 */
export function readPdfPageCountFromBytes(bytes: Buffer, maxPages: number): Promise<number | null> {
  return countOrNull(FileSource.of(bytes), maxPages)
}

async function countOrNull(source: FileSource, maxPages: number): Promise<number | null> {
  try {
    return await countFromStructure(source, maxPages)
  } catch (error) {
    if (error instanceof Unreadable) return null
    throw error
  }
}

/** A file this small is read in one call: cheaper than several ranged reads. */
const SMALL_FILE_BYTES = 64 * 1024
/** `startxref` must lie this close to the end (pdf.js looks further only to repair a file; we then fall back). */
const TAIL_BYTES = 1024
/** First read at an object or cross-reference offset; doubled while what is there does not end in it. */
const WINDOW_BYTES = 4 * 1024
/** The most one object's dictionary (catalog, page tree root) may span. */
const MAX_OBJECT_BYTES = 1024 * 1024
/** The most a cross-reference or object stream may hold, compressed and inflated. */
const MAX_STREAM_BYTES = 8 * 1024 * 1024
const MAX_INFLATED_BYTES = 32 * 1024 * 1024
/** Every byte read for one file together. */
const MAX_TOTAL_READ = 24 * 1024 * 1024
/** Cross-reference sections along /Prev: incremental updates rarely number more than a handful. */
const MAX_SECTIONS = 64
/** Subsections of one cross-reference table. */
const MAX_SUBSECTIONS = 100_000
/** Nesting of arrays and dictionaries in a parsed object. */
const MAX_DEPTH = 32
/** Where pdf.js looks for a linearization dictionary: the first object, near the start of the file. */
const LINEARIZED_HEAD_BYTES = 1024
/** A table entry: 10-digit offset, space, 5-digit generation, space, n|f, two end-of-line bytes. */
const TABLE_ENTRY_BYTES = 20

/** The file is not one this reader answers for; the caller falls back to pdf.js. */
class Unreadable extends Error {}
const odd = (why: string): never => {
  throw new Unreadable(why)
}

type Handle = Awaited<ReturnType<typeof open>>

/** The bytes the reader asks for: from the whole file in memory, or read from an open file by range. */
class FileSource {
  private readTotal = 0
  private constructor(
    readonly size: number,
    private readonly from: { whole: Buffer } | { handle: Handle },
  ) {}

  static async open(handle: Handle, size: number): Promise<FileSource> {
    if (size > SMALL_FILE_BYTES) return new FileSource(size, { handle })
    const whole = Buffer.alloc(size)
    const { bytesRead } = await handle.read(whole, 0, size, 0)
    return FileSource.of(whole.subarray(0, bytesRead))
  }

  static of(whole: Buffer): FileSource {
    return new FileSource(whole.length, { whole })
  }

  /** Up to `length` bytes at `offset` (fewer at the end of the file). */
  async read(offset: number, length: number): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.size) odd('offset outside the file')
    const end = Math.min(this.size, offset + length)
    if ('whole' in this.from) return this.from.whole.subarray(offset, end)
    this.readTotal += end - offset
    if (this.readTotal > MAX_TOTAL_READ) odd('read bound')
    const buffer = Buffer.alloc(end - offset)
    const { bytesRead } = await this.from.handle.read(buffer, 0, buffer.length, offset)
    return buffer.subarray(0, bytesRead)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Objects: a minimal PDF object parser (dictionaries, arrays, names, numbers, references, strings, keywords).

type Ref = { num: number; gen: number }
type PdfValue = number | boolean | null | string | Name | Ref | PdfValue[] | Dict | Keyword
class Name {
  constructor(readonly name: string) {}
}
class Keyword {
  constructor(readonly word: string) {}
}
type Dict = Map<string, PdfValue>
const isRef = (v: PdfValue | undefined): v is Ref =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && 'num' in v && 'gen' in v

/** Ran out of bytes: the caller reads a larger window and parses again. */
class NeedMore extends Error {}

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20])
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25])

class Lexer {
  /** `complete`: the bytes are all there is (an inflated object stream), so their end also ends a token. */
  constructor(
    readonly bytes: Buffer,
    public pos = 0,
    readonly complete = false,
  ) {}

  skipSpace(): void {
    const b = this.bytes
    while (this.pos < b.length) {
      const c = b[this.pos]!
      if (WHITESPACE.has(c)) this.pos++
      else if (c === 0x25) {
        // A comment runs to the end of the line.
        while (this.pos < b.length && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++
      } else return
    }
  }

  private regular(): string {
    const b = this.bytes
    const start = this.pos
    while (this.pos < b.length && !WHITESPACE.has(b[this.pos]!) && !DELIMITERS.has(b[this.pos]!)) this.pos++
    if (this.pos >= b.length && !this.complete) throw new NeedMore()
    return b.toString('latin1', start, this.pos)
  }

  /** One value; references (`n g R`) are folded from three tokens. */
  value(depth = 0): PdfValue {
    if (depth > MAX_DEPTH) odd('nesting')
    this.skipSpace()
    const b = this.bytes
    if (this.pos >= b.length) throw new NeedMore()
    const c = b[this.pos]!
    if (c === 0x2f) {
      this.pos++
      return new Name(this.regular())
    }
    if (c === 0x3c) {
      if (b[this.pos + 1] === undefined) throw new NeedMore()
      if (b[this.pos + 1] === 0x3c) {
        this.pos += 2
        const dict: Dict = new Map()
        for (;;) {
          this.skipSpace()
          if (this.pos + 1 >= b.length) throw new NeedMore()
          if (b[this.pos] === 0x3e && b[this.pos + 1] === 0x3e) {
            this.pos += 2
            return dict
          }
          const key = this.value(depth + 1)
          if (!(key instanceof Name)) odd('dictionary key')
          dict.set((key as Name).name, this.value(depth + 1))
        }
      }
      const end = b.indexOf(0x3e, this.pos)
      if (end < 0) throw new NeedMore()
      this.pos = end + 1
      return '' // hex string: its content is never needed here
    }
    if (c === 0x5b) {
      this.pos++
      const list: PdfValue[] = []
      for (;;) {
        this.skipSpace()
        if (this.pos >= b.length) throw new NeedMore()
        if (b[this.pos] === 0x5d) {
          this.pos++
          return list
        }
        list.push(this.value(depth + 1))
      }
    }
    if (c === 0x28) {
      let nest = 0
      for (; this.pos < b.length; this.pos++) {
        const d = b[this.pos]
        if (d === 0x5c) this.pos++
        else if (d === 0x28) nest++
        else if (d === 0x29 && --nest === 0) {
          this.pos++
          return '' // literal string: its content is never needed here
        }
      }
      throw new NeedMore()
    }
    if (DELIMITERS.has(c)) odd('unexpected delimiter')
    const word = this.regular()
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) {
      const n = Number(word)
      if (/^\d+$/.test(word)) {
        // `n g R`: look ahead without consuming unless it is a reference.
        const save = this.pos
        const gen = this.peekUnsigned()
        if (gen !== null) {
          this.skipSpace()
          const after = b[this.pos + 1]
          if (after === undefined && !this.complete) throw new NeedMore()
          if (b[this.pos] === 0x52 && (after === undefined || WHITESPACE.has(after) || DELIMITERS.has(after))) {
            this.pos++
            return { num: n, gen }
          }
        }
        this.pos = save
      }
      return n
    }
    if (word === 'true') return true
    if (word === 'false') return false
    if (word === 'null') return null
    return new Keyword(word)
  }

  private peekUnsigned(): number | null {
    this.skipSpace()
    const b = this.bytes
    const start = this.pos
    while (this.pos < b.length && b[this.pos]! >= 0x30 && b[this.pos]! <= 0x39) this.pos++
    const next = b[this.pos]
    if (next === undefined && !this.complete) throw new NeedMore()
    if (this.pos === start || !(next === undefined || WHITESPACE.has(next) || DELIMITERS.has(next))) return null
    return Number(b.toString('latin1', start, this.pos))
  }

  /** An unsigned integer token, or odd. */
  integer(): number {
    const v = this.value()
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) odd('integer expected')
    return v as number
  }

  keyword(word: string): void {
    const v = this.value()
    if (!(v instanceof Keyword) || v.word !== word) odd(`${word} expected`)
  }
}

/** Reads at `offset` in growing windows until `parse` has what it needs (bounded by `max`). */
async function withWindow<T>(source: FileSource, offset: number, max: number, parse: (bytes: Buffer) => T): Promise<T> {
  for (let length = WINDOW_BYTES; ; length *= 2) {
    const bytes = await source.read(offset, length)
    try {
      return parse(bytes)
    } catch (error) {
      if (!(error instanceof NeedMore)) throw error
      if (bytes.length < length || length >= max) odd('object runs past its bound or the end of the file')
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Cross-reference sections.

type Entry =
  | { kind: 'free' }
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number }

type Section = { trailer: Dict; lookup(num: number): Promise<Entry | undefined> }

async function readSection(source: FileSource, offset: number): Promise<Section> {
  const head = await source.read(offset, WINDOW_BYTES)
  const lexer = new Lexer(head)
  lexer.skipSpace()
  if (head.toString('latin1', lexer.pos, lexer.pos + 4) === 'xref') return readTable(source, offset + lexer.pos + 4)
  return readXrefStream(source, offset)
}

/** A classic table: subsection headers are read in passing; entries only when an object is looked up. */
async function readTable(source: FileSource, start: number): Promise<Section> {
  const subsections: { first: number; count: number; at: number }[] = []
  let pos = start
  for (;;) {
    if (subsections.length > MAX_SUBSECTIONS) odd('subsections')
    const header = await withWindow(source, pos, WINDOW_BYTES, (bytes) => {
      const lexer = new Lexer(bytes)
      lexer.skipSpace()
      if (bytes.toString('latin1', lexer.pos, lexer.pos + 7) === 'trailer') {
        return { kind: 'trailer', at: lexer.pos + 7 } as const
      }
      const first = lexer.integer()
      const count = lexer.integer()
      // One end-of-line after the header, then the entries (some writers put a space before it).
      let at = lexer.pos
      while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x0d || bytes[at] === 0x0a)) at++
      if (at >= bytes.length) throw new NeedMore()
      return { kind: 'subsection', first, count, at } as const
    })
    if (header.kind === 'trailer') {
      const trailer = await withWindow(source, pos + header.at, MAX_OBJECT_BYTES, (bytes) => new Lexer(bytes).value())
      if (!(trailer instanceof Map)) odd('trailer')
      return { trailer: trailer as Dict, lookup: (num) => tableEntry(source, subsections, num) }
    }
    subsections.push({ first: header.first, count: header.count, at: pos + header.at })
    pos += header.at + header.count * TABLE_ENTRY_BYTES
  }
}

const TABLE_ENTRY = /^(\d{10}) (\d{5}) ([nf])[\r\n ][\r\n]$/

async function tableEntry(
  source: FileSource,
  subsections: readonly { first: number; count: number; at: number }[],
  num: number,
): Promise<Entry | undefined> {
  // Within one table a later subsection naming the same object is not expected; the first is taken, as pdf.js does.
  for (const s of subsections) {
    if (num < s.first || num >= s.first + s.count) continue
    const raw = (await source.read(s.at + (num - s.first) * TABLE_ENTRY_BYTES, TABLE_ENTRY_BYTES)).toString('latin1')
    const m = TABLE_ENTRY.exec(raw)
    if (!m) return odd('table entry')
    if (m[3] === 'f') return { kind: 'free' }
    return { kind: 'offset', offset: Number(m[1]), gen: Number(m[2]) }
  }
  return undefined
}

/** `n g obj <<dict>> stream` at `offset`: the dictionary and where the stream's data starts. */
async function readStreamObject(
  source: FileSource,
  offset: number,
  expect?: Ref,
): Promise<{ dict: Dict; dataAt: number }> {
  return withWindow(source, offset, MAX_OBJECT_BYTES, (bytes) => {
    const lexer = new Lexer(bytes)
    const num = lexer.integer()
    const gen = lexer.integer()
    lexer.keyword('obj')
    if (expect && (num !== expect.num || gen !== expect.gen)) odd('object number')
    const dict = lexer.value()
    if (!(dict instanceof Map)) return odd('stream dictionary')
    lexer.keyword('stream')
    // `stream` is followed by CRLF or LF.
    let at = lexer.pos
    if (bytes[at] === 0x0d) at++
    if (bytes[at] === 0x0a) at++
    if (at >= bytes.length) throw new NeedMore()
    return { dict, dataAt: offset + at }
  })
}

/** A stream's data, inflated when it is Flate-encoded, with the PNG predictors cross-reference streams use. */
async function streamData(source: FileSource, dict: Dict, dataAt: number, length: number): Promise<Buffer> {
  if (!Number.isSafeInteger(length) || length < 0 || length > MAX_STREAM_BYTES) odd('stream length')
  const raw = await source.read(dataAt, length)
  if (raw.length < length) odd('stream runs past the end of the file')
  let filter = dict.get('Filter')
  if (Array.isArray(filter)) {
    if (filter.length > 1) odd('filter chain')
    filter = filter[0]
  }
  if (filter === undefined) return raw
  if (!(filter instanceof Name) || filter.name !== 'FlateDecode') return odd('filter')
  let data: Buffer
  try {
    data = inflateSync(raw, { maxOutputLength: MAX_INFLATED_BYTES })
  } catch {
    return odd('inflate')
  }
  let params = dict.get('DecodeParms')
  if (Array.isArray(params)) params = params[0]
  if (params instanceof Map) {
    const predictor = params.get('Predictor') ?? 1
    if (predictor === 1) return data
    if (typeof predictor !== 'number' || predictor < 10) odd('predictor') // TIFF predictor: pdf.js's to handle
    const columns = params.get('Columns') ?? 1
    const colors = params.get('Colors') ?? 1
    const bits = params.get('BitsPerComponent') ?? 8
    if (typeof columns !== 'number' || colors !== 1 || bits !== 8 || columns < 1 || columns > 64) odd('predictor')
    return unpredictPng(data, columns as number)
  }
  return data
}

/** Undoes PNG row filters (one filter byte per row, one byte per pixel). */
function unpredictPng(data: Buffer, columns: number): Buffer {
  const rowBytes = columns + 1
  const rows = Math.floor(data.length / rowBytes)
  const out = Buffer.alloc(rows * columns)
  for (let r = 0; r < rows; r++) {
    const filter = data[r * rowBytes]!
    for (let c = 0; c < columns; c++) {
      const x = data[r * rowBytes + 1 + c]!
      const left = c > 0 ? out[r * columns + c - 1]! : 0
      const up = r > 0 ? out[(r - 1) * columns + c]! : 0
      const upLeft = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1]! : 0
      let v: number
      switch (filter) {
        case 0:
          v = x
          break
        case 1:
          v = x + left
          break
        case 2:
          v = x + up
          break
        case 3:
          v = x + ((left + up) >> 1)
          break
        case 4: {
          const p = left + up - upLeft
          const pa = Math.abs(p - left)
          const pb = Math.abs(p - up)
          const pc = Math.abs(p - upLeft)
          v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft)
          break
        }
        default:
          return odd('png filter')
      }
      out[r * columns + c] = v & 0xff
    }
  }
  return out
}

async function readXrefStream(source: FileSource, offset: number): Promise<Section> {
  const { dict, dataAt } = await readStreamObject(source, offset)
  const type = dict.get('Type')
  if (!(type instanceof Name) || type.name !== 'XRef') odd('not a cross-reference stream')
  const widths = dict.get('W')
  const size = dict.get('Size')
  const length = dict.get('Length')
  if (typeof length !== 'number') odd('indirect length of a cross-reference stream')
  if (!Array.isArray(widths) || widths.length !== 3 || !widths.every((w) => typeof w === 'number' && w >= 0 && w <= 8))
    odd('/W')
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) odd('/Size')
  const w = widths as number[]
  const index = dict.get('Index') ?? [0, size as number]
  if (
    !Array.isArray(index) ||
    index.length % 2 !== 0 ||
    !index.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
  )
    odd('/Index')
  const data = await streamData(source, dict, dataAt, length as number)
  const entryBytes = w[0]! + w[1]! + w[2]!
  if (entryBytes === 0) odd('/W')
  const subsections: { first: number; count: number; at: number }[] = []
  let at = 0
  for (let i = 0; i < (index as number[]).length; i += 2) {
    const first = (index as number[])[i]!
    const count = (index as number[])[i + 1]!
    subsections.push({ first, count, at })
    at += count * entryBytes
  }
  if (at > data.length) odd('cross-reference stream shorter than its /Index')
  const field = (pos: number, width: number, missing: number): number => {
    if (width === 0) return missing
    let v = 0
    for (let k = 0; k < width; k++) v = v * 256 + data[pos + k]!
    return v
  }
  const lookup = async (num: number): Promise<Entry | undefined> => {
    for (const s of subsections) {
      if (num < s.first || num >= s.first + s.count) continue
      const pos = s.at + (num - s.first) * entryBytes
      const kind = field(pos, w[0]!, 1)
      const a = field(pos + w[0]!, w[1]!, 0)
      const b = field(pos + w[0]! + w[1]!, w[2]!, 0)
      if (kind === 0) return { kind: 'free' }
      if (kind === 1) return { kind: 'offset', offset: a, gen: b }
      if (kind === 2) return { kind: 'compressed', stream: a, index: b }
      return odd('entry type')
    }
    return undefined
  }
  return { trailer: dict, lookup }
}

// ---------------------------------------------------------------------------------------------------------------

async function countFromStructure(source: FileSource, maxPages: number): Promise<number | null> {
  const tailAt = Math.max(0, source.size - TAIL_BYTES)
  const tail = (await source.read(tailAt, TAIL_BYTES)).toString('latin1')
  const at = tail.lastIndexOf('startxref')
  if (at < 0) return null
  const m = /^startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(at))
  if (!m) return null

  const sections: Section[] = []
  const seen = new Set<number>()
  let next: number | undefined = Number(m[1])
  while (next !== undefined) {
    if (seen.has(next) || sections.length >= MAX_SECTIONS) return null // a /Prev loop, or too long a chain
    seen.add(next)
    const section = await readSection(source, next)
    // Encrypted: pdf.js says whether a password is needed. Hybrid (/XRefStm): its objects are pdf.js's to find.
    if (section.trailer.has('Encrypt') || section.trailer.has('XRefStm')) return null
    sections.push(section)
    const prev = section.trailer.get('Prev')
    if (prev === undefined) next = undefined
    else if (typeof prev === 'number' && Number.isSafeInteger(prev)) next = prev
    else return null
  }

  const lookup = async (num: number): Promise<Entry> => {
    for (const section of sections) {
      const entry = await section.lookup(num)
      if (entry) return entry
    }
    return odd('object not in the cross-reference')
  }
  const objectStreams = new Map<number, { dict: Dict; data: Buffer }>()

  const resolve = async (ref: Ref): Promise<PdfValue> => {
    const entry = await lookup(ref.num)
    if (entry.kind === 'free') return odd('free object')
    if (entry.kind === 'offset') {
      if (entry.gen !== ref.gen) odd('generation')
      return withWindow(source, entry.offset, MAX_OBJECT_BYTES, (bytes) => {
        const lexer = new Lexer(bytes)
        if (lexer.integer() !== ref.num || lexer.integer() !== ref.gen) odd('object number')
        lexer.keyword('obj')
        return lexer.value()
      })
    }
    if (ref.gen !== 0) odd('generation of a compressed object')
    let stream = objectStreams.get(entry.stream)
    if (!stream) {
      const streamEntry = await lookup(entry.stream)
      if (streamEntry.kind !== 'offset') return odd('object stream location')
      const { dict, dataAt } = await readStreamObject(source, streamEntry.offset, {
        num: entry.stream,
        gen: streamEntry.gen,
      })
      const type = dict.get('Type')
      if (!(type instanceof Name) || type.name !== 'ObjStm') odd('not an object stream')
      let length = dict.get('Length')
      // An object stream's /Length may be indirect; its object is a plain number in the file.
      if (isRef(length)) {
        const lengthEntry = await lookup(length.num)
        if (lengthEntry.kind !== 'offset') odd('length location')
        const lengthRef = length
        length = await withWindow(source, (lengthEntry as { offset: number }).offset, WINDOW_BYTES, (bytes) => {
          const lexer = new Lexer(bytes)
          if (lexer.integer() !== lengthRef.num || lexer.integer() !== lengthRef.gen) odd('object number')
          lexer.keyword('obj')
          return lexer.integer()
        })
      }
      if (typeof length !== 'number') odd('object stream length')
      stream = { dict, data: await streamData(source, dict, dataAt, length as number) }
      objectStreams.set(entry.stream, stream)
    }
    const n = stream.dict.get('N')
    const first = stream.dict.get('First')
    if (typeof n !== 'number' || typeof first !== 'number' || !Number.isSafeInteger(first) || first < 0) {
      return odd('/N or /First')
    }
    if (entry.index >= n) odd('index past /N')
    try {
      const header = new Lexer(stream.data.subarray(0, first), 0, true)
      let num = -1
      let offset = -1
      for (let i = 0; i <= entry.index; i++) {
        num = header.integer()
        offset = header.integer()
      }
      if (num !== ref.num) odd('object stream index')
      return new Lexer(stream.data, first + offset, true).value()
    } catch (error) {
      if (error instanceof NeedMore) odd('object stream truncated')
      throw error
    }
  }

  const root = sections[0]!.trailer.get('Root')
  if (!isRef(root)) return null
  const catalog = await resolve(root)
  if (!(catalog instanceof Map)) return null
  const pagesRef = catalog.get('Pages')
  if (!isRef(pagesRef)) return null
  const pages = await resolve(pagesRef)
  if (!(pages instanceof Map)) return null
  const count = pages.get('Count')
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1 || count > maxPages) return null
  if (!(await agreesWithLinearization(source, count))) return null
  return count
}

/**
 * pdf.js takes a linearized file's page count from its linearization dictionary (/N) when that dictionary is valid
 * (its /L is the file's length): the count stands only when /N says the same.
 */
async function agreesWithLinearization(source: FileSource, count: number): Promise<boolean> {
  const head = (await source.read(0, LINEARIZED_HEAD_BYTES)).toString('latin1')
  if (!head.includes('/Linearized')) return true
  const length = /\/L\s+(\d+)/.exec(head)
  const pages = /\/N\s+(\d+)/.exec(head)
  if (!length || !pages) return false
  return Number(length[1]) !== source.size || Number(pages[1]) === count
}
