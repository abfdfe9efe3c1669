import { fileTypeFromFile } from 'file-type'
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

/**
 * Decides a file's type by its content (magic bytes), never by its name.
 * Returns null for anything Quire does not accept (text files, zips, animated PNG is still PNG, ...).
 */
export async function sniffFileType(path: string): Promise<SniffedFileType | null> {
  const result = await fileTypeFromFile(path)
  if (!result) return null
  const type = BY_EXTENSION[result.ext]
  if (!type) return null
  return { type, mime: FILE_TYPE_MIME[type] }
}
