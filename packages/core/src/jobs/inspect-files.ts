import { rm } from 'node:fs/promises'
import { DomainError, isDomainError, type FileType, type PipelineDefinition } from '@quire/domain'
import type { Db } from '@quire/db'
import { recordEvents } from '../events/record-event.ts'
import { confirmKeyIn, type KeyState } from '../workspaces/api-keys.ts'
import {
  checkPageLimit,
  countPages,
  fileLimits,
  isExtractionError,
  sniffFileType,
  sniffFileTypeFromHead,
} from '@quire/extraction'

/** Pages reserved for a file whose pages cannot be counted at intake. */
const UNCOUNTABLE_PAGES = 1

export type UploadedFile = {
  tempPath: string
  fileName: string
  sizeBytes: number
  /** The file's first bytes, when they were kept as it streamed to disk: its type is then told from them. */
  head?: Buffer
}
export type InspectedFile = UploadedFile & { fileType: FileType; mimeType: string; pageCount: number }

const QUARANTINE_CODES = new Set(['UNSUPPORTED_FILE_TYPE', 'PIPELINE_FILE_TOO_LARGE'])

/**
 * Intake of one file for a workspace (see `inspect` below); a file refused for its type or size is also recorded as a
 * quarantine event (Form B webhooks receive it as `doc.quarantined`) before the error goes back to the client.
 */
export async function intakeFile(opts: {
  db: Db
  workspaceId: string
  file: UploadedFile
  definition: PipelineDefinition
  /** The types the workspace's API form takes at all (a pipeline may accept fewer, never more). */
  formTypes: readonly FileType[]
  /** The key state a quarantine record confirms first (see recordQuarantine). */
  confirmKey?: KeyState | null
}): Promise<InspectedFile> {
  try {
    return await inspect(opts.file, opts.definition, opts.formTypes)
  } catch (err) {
    if (isDomainError(err) && QUARANTINE_CODES.has(err.code)) {
      await recordQuarantine({
        db: opts.db,
        workspaceId: opts.workspaceId,
        fileName: opts.file.fileName,
        reason: err.code === 'UNSUPPORTED_FILE_TYPE' ? 'type' : 'size',
        message: err.message,
        confirmKey: opts.confirmKey,
      })
    }
    throw err
  }
}

/**
 * Intake refused a file (spec: `doc.quarantined`, "antivirus, size or type"): its type or the pipeline's size limit
 * here, the platform's per-file limit while the upload streams (the API's multipart reader, 413). With `confirmKey`
 * (a principal read on an earlier request) the key is confirmed first: PrincipalChanged, and nothing recorded, when
 * it was revoked or changed since.
 */
export async function recordQuarantine(opts: {
  db: Db
  workspaceId: string
  fileName: string
  reason: 'type' | 'size'
  message: string
  confirmKey?: KeyState | null
}): Promise<void> {
  await opts.db.$transaction(async (tx) => {
    if (opts.confirmKey) await confirmKeyIn(tx, opts.confirmKey)
    await recordEvents(tx, [
      {
        workspaceId: opts.workspaceId,
        type: 'document.quarantined',
        data: { file_name: opts.fileName, reason: opts.reason, message: opts.message },
      },
    ])
  })
}

/**
 * Decides each file's type from its content (never its name or declared type), checks it against the pipeline's
 * accepted types and size limit, and counts its pages for the credit reservation. Only what can be judged cheaply is
 * refused here: the type, the size, and a PDF or TIFF of more pages than QUIRE_MAX_PAGES (its page count is known by
 * now, read from its structure, not its content). What only a full read can tell (a DOCX inflating past the limits,
 * an image over the pixel limit) fails in initialization.
 */
async function inspect(
  file: UploadedFile,
  definition: PipelineDefinition,
  formTypes: readonly FileType[],
): Promise<InspectedFile> {
  if (file.sizeBytes === 0) throw new DomainError('MISSING_FILE', `file "${file.fileName}" is empty`)
  // From the head kept during the upload where it decides (undefined: only the file can tell, e.g. a DOCX's zip).
  let sniffed = file.head ? await sniffFileTypeFromHead(file.head, file.sizeBytes) : undefined
  if (sniffed === undefined) sniffed = await sniffFileType(file.tempPath)
  if (!sniffed) {
    throw new DomainError('UNSUPPORTED_FILE_TYPE', `file "${file.fileName}" is not a PDF, DOCX or supported image`)
  }
  if (!formTypes.includes(sniffed.type)) {
    throw new DomainError('UNSUPPORTED_FILE_TYPE', `${sniffed.type} files are not accepted by this API`, {
      accepted: formTypes,
    })
  }
  if (!definition.accept.types.includes(sniffed.type)) {
    throw new DomainError('UNSUPPORTED_FILE_TYPE', `this pipeline does not accept ${sniffed.type} files`, {
      accepted: definition.accept.types,
    })
  }
  const maxBytes = definition.accept.max_file_mb * 1024 * 1024
  if (file.sizeBytes > maxBytes) {
    throw new DomainError(
      'PIPELINE_FILE_TOO_LARGE',
      `file exceeds this pipeline's limit of ${definition.accept.max_file_mb} MB`,
    )
  }
  // A recognised type whose content cannot be read (damaged, truncated, encrypted) is not refused here: it is
  // accepted with one page reserved and fails in initialization with the cause (DESIGN, "Processing lifecycle").
  let pageCount = UNCOUNTABLE_PAGES
  try {
    // A file no longer than its kept head is all in memory: counted from there, not read again.
    pageCount = await countPages(
      file.tempPath,
      sniffed.type,
      file.head && { head: file.head, sizeBytes: file.sizeBytes },
    )
  } catch (err) {
    if (!isExtractionError(err)) throw err
  }
  try {
    checkPageLimit(sniffed.type, pageCount)
  } catch (err) {
    if (!isExtractionError(err)) throw err
    throw new DomainError('PIPELINE_FILE_TOO_LARGE', `file "${file.fileName}" is too large: ${err.message}`, {
      pages: pageCount,
      max_pages: fileLimits().maxPages,
    })
  }
  return { ...file, fileType: sniffed.type, mimeType: sniffed.mime, pageCount: Math.max(1, pageCount) }
}

export async function discardUploads(files: UploadedFile[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f.tempPath, { force: true })))
}
