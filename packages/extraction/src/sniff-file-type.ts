import { open } from 'node:fs/promises'
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type'
import { FILE_TYPE_MIME, type FileType } from './file-types.ts'

export type SniffedFileType = { type: FileType; mime: string }

/** file-type's extension → our FileType. Anything not listed is refused. */
const BY_EXTENSION: Readonly<Record<string, FileType>> = {
  pdf: 'pdf',
  docx: 'docx',
  png: 'png',
  apng: 'png',
  jpg: 'jpeg',
  tif: 'tiff',
  bmp: 'bmp',
  gif: 'gif',
  webp: 'webp',
}

/** How much of the file the fallback below reads. */
const HEAD_BYTES = 64 * 1024
/**
 * The leading bytes of an upload the API keeps while it streams to disk, for sniffFileTypeFromHead: as many as the
 * fallback below reads, so its answer from them is the one it gives from the file.
 */
export const SNIFF_HEAD_BYTES = HEAD_BYTES

const TIFF_LE = Buffer.from('II*\0', 'latin1')
const TIFF_BE = Buffer.from('MM\0*', 'latin1')
const ZIP_LOCAL_HEADER = Buffer.from('PK\x03\x04', 'latin1')
const CFB_MAGIC = Buffer.from('d0cf11e0a1b11ae1', 'hex')
/** The stream an encrypted OOXML document (ECMA-376 agile/standard encryption) keeps inside its CFB container. */
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le')

/**
 * The type named by a file's leading bytes when file-type, which also reads structures further in, gave up: a
 * truncated TIFF (its IFD lies past the end), a truncated DOCX (its `word/` entries cut off or its central directory
 * gone) and an encrypted DOCX (a CFB container holding `EncryptedPackage`). These are of a recognised type with
 * damaged or encrypted content: intake accepts them and initialization fails them with the cause (DESIGN,
 * "Processing lifecycle").
 */
async function sniffByHeader(path: string): Promise<FileType | null> {
  const handle = await open(path, 'r')
  let head: Buffer
  try {
    const buffer = Buffer.alloc(HEAD_BYTES)
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0)
    head = buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
  return typeByHeader(head)
}

function typeByHeader(head: Buffer): FileType | null {
  if (head.subarray(0, 4).equals(TIFF_LE) || head.subarray(0, 4).equals(TIFF_BE)) return 'tiff'
  if (head.subarray(0, 4).equals(ZIP_LOCAL_HEADER) && isWordPackageHead(head)) return 'docx'
  if (head.subarray(0, 8).equals(CFB_MAGIC) && head.includes(ENCRYPTED_PACKAGE)) return 'docx'
  return null
}

/** A zip whose first local file headers name Word package parts. */
function isWordPackageHead(head: Buffer): boolean {
  let offset = 0
  while (offset + 30 <= head.length && head.subarray(offset, offset + 4).equals(ZIP_LOCAL_HEADER)) {
    const compressedSize = head.readUInt32LE(offset + 18)
    const nameLength = head.readUInt16LE(offset + 26)
    const extraLength = head.readUInt16LE(offset + 28)
    const name = head.subarray(offset + 30, offset + 30 + nameLength).toString('utf8')
    if (name.startsWith('word/')) return true
    // Entries written with a data descriptor do not state their size here; stop rather than guess.
    if (compressedSize === 0 && (head.readUInt16LE(offset + 6) & 0x8) !== 0) break
    offset += 30 + nameLength + extraLength + compressedSize
  }
  return false
}

/**
 * Decides a file's type by its content (magic bytes), never by its name.
 * Returns null for anything Quire does not accept (text files, zips, animated PNG is still PNG, ...).
 */
export async function sniffFileType(path: string): Promise<SniffedFileType | null> {
  const result = await fileTypeFromFile(path)
  const type = (result && BY_EXTENSION[result.ext]) ?? (await sniffByHeader(path))
  if (!type) return null
  return { type, mime: FILE_TYPE_MIME[type] }
}

/**
 * sniffFileType's answer from the first bytes of a file (at most SNIFF_HEAD_BYTES of them, captured while the upload
 * streamed to disk), without opening the file: the same answer, or `undefined` where the head alone cannot promise
 * it. A head that holds the whole file answers as the file does. Of a longer file, the types named by their leading
 * bytes (PDF, PNG, JPEG, TIFF, BMP, GIF, WebP, and a DOCX whose Word parts come first) are answered; file-type walks
 * a zip's entries to tell a DOCX, and what it does not recognise from the head it might recognise further in: for
 * `undefined`, sniff the file.
 */
export async function sniffFileTypeFromHead(
  head: Buffer,
  fileSize: number,
): Promise<SniffedFileType | null | undefined> {
  const whole = head.length >= fileSize
  const result = await fileTypeFromBuffer(head.subarray(0, Math.min(head.length, fileSize)))
  const named = result && BY_EXTENSION[result.ext]
  let type: FileType | null | undefined
  if (whole) type = named ?? typeByHeader(head)
  else if (named && named !== 'docx') type = named
  // What the leading bytes name (TIFF's magic, Word parts first in a zip, an encrypted package) file-type never
  // names otherwise from further in.
  else type = typeByHeader(head.subarray(0, HEAD_BYTES)) ?? undefined
  if (type === undefined) return undefined
  if (!type) return null
  return { type, mime: FILE_TYPE_MIME[type] }
}
