import type { Job } from '@quire/db'

/** A stored file of a job, wherever its columns are kept. */
export type StoredFile = {
  position: number
  fileName: string
  fileType: string
  mimeType: string
  sizeBytes: number
  pageCount: number
  blobKey: string
}

type FileColumns = Pick<Job, 'pageCount' | 'fileName' | 'fileType' | 'mimeType' | 'sizeBytes' | 'blobKey'>

/** What a Prisma read of a job selects for jobFilesOf: the job row's file columns and its `job_files` rows. */
export const JOB_FILES_SELECT = {
  pageCount: true,
  fileName: true,
  fileType: true,
  mimeType: true,
  sizeBytes: true,
  blobKey: true,
  files: true,
} as const

/**
 * A job's files in upload order: its `job_files` rows, or the one file a lone submission keeps in the job row
 * (migration `*_lone_job_file_and_hold_in_job_row`: position 0, the job's pages).
 */
export function jobFilesOf<F extends StoredFile>(job: FileColumns & { files: F[] }): (F | StoredFile)[] {
  if (job.blobKey === null) return job.files
  return [
    {
      position: 0,
      fileName: job.fileName!,
      fileType: job.fileType!,
      mimeType: job.mimeType!,
      sizeBytes: job.sizeBytes!,
      pageCount: job.pageCount,
      blobKey: job.blobKey,
    },
  ]
}
