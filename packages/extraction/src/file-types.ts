/** The file types Quire accepts, by the lowercase names used in `accept.types`. */
export const FILE_TYPES = ['pdf', 'docx', 'png', 'jpeg', 'tiff', 'bmp', 'gif', 'webp'] as const

export type FileType = (typeof FILE_TYPES)[number]

/** The canonical MIME type reported for each file type. */
export const FILE_TYPE_MIME: Readonly<Record<FileType, string>> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  png: 'image/png',
  jpeg: 'image/jpeg',
  tiff: 'image/tiff',
  bmp: 'image/bmp',
  gif: 'image/gif',
  webp: 'image/webp',
}

export const IMAGE_FILE_TYPES: readonly FileType[] = ['png', 'jpeg', 'tiff', 'bmp', 'gif', 'webp']

export function isFileType(value: unknown): value is FileType {
  return typeof value === 'string' && (FILE_TYPES as readonly string[]).includes(value)
}

export function isImageFileType(type: FileType): boolean {
  return IMAGE_FILE_TYPES.includes(type)
}
