import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createInflateRaw } from 'node:zlib'
import { ExtractionError } from './errors.ts'
import { type FileLimits, fileLimits, megabytes, RATIO_FLOOR_BYTES } from './file-limits.ts'
import { listZipEntries, type ZipEntry } from './read-zip-entry.ts'

export type DocxLimits = Pick<
  FileLimits,
  'maxUncompressedBytes' | 'maxXmlBytes' | 'maxZipEntries' | 'maxCompressionRatio'
>

export type DocxInspection = {
  /** Characters of the body text (text runs of word/document.xml, plus one per paragraph), as a reader sees them. */
  textChars: number
}

const tooLarge = (why: string) =>
  new ExtractionError('too_large', `DOCX expands beyond what Quire reads (${why}); it looks like a decompression bomb`)

/**
 * Walks every entry of a DOCX with a running byte count, aborting the moment a limit is passed (a 400 KB file can
 * expand to gigabytes of XML, and the XML parser would hold all of it), and counts the body text on the way. The
 * central directory is checked first (entry count, entries inside the file); sizes it declares are never trusted.
 * Throws ExtractionError `too_large` (over a limit) or `corrupt_file` (not a readable ZIP).
 */
export async function inspectDocx(path: string, limits: DocxLimits = fileLimits()): Promise<DocxInspection> {
  const entries = await listZipEntries(path).catch(() => null)
  if (!entries) throw new ExtractionError('corrupt_file', 'DOCX is not a readable ZIP archive')
  if (entries.length > limits.maxZipEntries) {
    throw tooLarge(`${entries.length} entries, at most ${limits.maxZipEntries}`)
  }
  let total = 0
  let xml = 0
  let textChars = 0
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue
    const isXml = /\.(xml|rels)$/i.test(entry.name)
    const counter = entry.name === 'word/document.xml' ? new TextCounter() : null
    const size = await inflatedSize(path, entry, (bytes, chunk) => {
      counter?.feed(chunk)
      if (total + bytes > limits.maxUncompressedBytes) {
        throw tooLarge(`more than ${megabytes(limits.maxUncompressedBytes)} inflated`)
      }
      if (isXml && xml + bytes > limits.maxXmlBytes) throw tooLarge(`more than ${megabytes(limits.maxXmlBytes)} of XML`)
      if (bytes > RATIO_FLOOR_BYTES && bytes > entry.compressedSize * limits.maxCompressionRatio) {
        throw tooLarge(`${entry.name} inflates more than ${limits.maxCompressionRatio}×`)
      }
    })
    total += size
    if (isXml) xml += size
    if (counter) textChars = counter.chars
  }
  return { textChars }
}

/** Inflates one entry from the file in a stream, calling `check(bytesSoFar, chunk)` per chunk; returns its size. */
async function inflatedSize(
  path: string,
  entry: ZipEntry,
  check: (bytes: number, chunk: Buffer) => void,
): Promise<number> {
  const dataAt = await dataOffset(path, entry)
  if (entry.compressedSize === 0) return 0
  const raw = createReadStream(path, { start: dataAt, end: dataAt + entry.compressedSize - 1 })
  if (entry.method === 0) {
    let bytes = 0
    for await (const chunk of raw) {
      bytes += (chunk as Buffer).length
      check(bytes, chunk as Buffer)
    }
    return bytes
  }
  if (entry.method !== 8)
    throw new ExtractionError('corrupt_file', `DOCX entry ${entry.name} uses an unknown compression`)
  const inflate = createInflateRaw()
  raw.on('error', (err) => inflate.destroy(err))
  raw.pipe(inflate)
  let bytes = 0
  try {
    for await (const chunk of inflate) {
      bytes += (chunk as Buffer).length
      check(bytes, chunk as Buffer)
    }
  } catch (err) {
    if (err instanceof ExtractionError) throw err
    throw new ExtractionError('corrupt_file', `DOCX entry ${entry.name} is damaged: ${(err as Error).message}`, {
      cause: err,
    })
  } finally {
    raw.destroy()
    inflate.destroy()
  }
  return bytes
}

async function dataOffset(path: string, entry: ZipEntry): Promise<number> {
  const handle = await open(path, 'r')
  try {
    const local = Buffer.alloc(30)
    const { bytesRead } = await handle.read(local, 0, 30, entry.localOffset)
    if (bytesRead < 30 || local.readUInt32LE(0) !== 0x04034b50) {
      throw new ExtractionError('corrupt_file', `DOCX entry ${entry.name} is damaged`)
    }
    return entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28)
  } finally {
    await handle.close()
  }
}

/**
 * Counts text characters in WordprocessingML as it streams past: characters outside tags (an entity counts as one),
 * plus one per paragraph end, which is how a plain-text reader lays the body out.
 */
class TextCounter {
  chars = 0
  private inTag = false
  private inEntity = false
  private tag = ''

  feed(chunk: Buffer): void {
    const text = chunk.toString('latin1')
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (this.inTag) {
        if (c === 62 /* > */) {
          this.inTag = false
          if (this.tag.startsWith('/w:p') && this.tag.length === 4) this.chars++
          this.tag = ''
        } else if (this.tag.length < 8) this.tag += text[i]
      } else if (c === 60 /* < */) {
        this.inTag = true
        this.inEntity = false
      } else if (this.inEntity) {
        if (c === 59 /* ; */) this.inEntity = false
      } else if (c === 38 /* & */) {
        this.inEntity = true
        this.chars++
      } else if ((c & 0xc0) !== 0x80 && c !== 10 && c !== 13) {
        // UTF-8 continuation bytes belong to the character already counted.
        this.chars++
      }
    }
  }
}
