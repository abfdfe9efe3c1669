import { randomBytes } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { DomainError } from '@quire/domain'
import type { Db } from '@quire/db'
import { isExtractionError, isFileType } from '@quire/extraction'
import type { BlobStore } from '@quire/storage'
import { documentNotFound } from './get-document.ts'
import type { PageRenderer } from './page-renderer.ts'
import { JOB_FILES_SELECT, jobFilesOf } from '../jobs/job-files.ts'

/**
 * Where a file page's image is kept: beside the file, under the file's key with a suffix, so the sweep of files no
 * live job owns (sweep-unowned-blobs.ts, jobIdOfBlobKey) deletes it with them once the job is past retention.
 */
export const pageImageKey = (fileKey: string, filePage: number) => `${fileKey}.page-${filePage}.png`

/**
 * Page `page` (1-based, of the document: a split child's first page is its page 1) as a PNG (DESIGN, "Review desk"):
 * rendered once, off the event loop (`renderer`), and kept in blob storage; later reads stream the kept image. The
 * ETag names the image (a file page's image never changes), so a conditional read needs no blob read.
 * Unknown document, or a page past the last: not_found; a document of a job past retention: job_expired.
 */
export async function getDocumentPage(opts: {
  db: Db
  blobs: BlobStore
  renderer: PageRenderer
  workspaceId: string
  documentId: string
  page: number
}): Promise<{ etag: string; image: () => Promise<Readable | Buffer> }> {
  const d = await opts.db.document.findUnique({
    where: { id: opts.documentId },
    select: {
      pages: true,
      filePosition: true,
      job: { select: { workspaceId: true, ...JOB_FILES_SELECT } },
    },
  })
  if (!d || d.job.workspaceId !== opts.workspaceId) throw await documentNotFound(opts)
  const filePage = d.pages[opts.page - 1]
  if (filePage === undefined) {
    throw new DomainError('not_found', `document ${opts.documentId} has ${d.pages.length} page(s), not ${opts.page}`)
  }
  const file = jobFilesOf(d.job).find((f) => f.position === d.filePosition)
  if (!file || !isFileType(file.fileType)) throw new DomainError('not_found', 'the document has no stored file')
  const key = pageImageKey(file.blobKey, filePage)
  const etag = `"${path.basename(key)}"`
  const fileType = file.fileType
  return {
    etag,
    image: async () => {
      if (await opts.blobs.exists(key)) return opts.blobs.read(key)
      let png: Buffer
      try {
        png = await opts.renderer.render(await opts.blobs.localPath(file.blobKey), fileType, filePage)
      } catch (err) {
        if (isExtractionError(err)) throw new DomainError('not_found', `no page image: ${err.message}`)
        throw err
      }
      // Kept for the next reader; a failure to keep it costs a render later, not this answer.
      const tmp = path.join(tmpdir(), `quire-page-${randomBytes(8).toString('hex')}.png`)
      try {
        await writeFile(tmp, png)
        await opts.blobs.putFile(key, tmp)
      } catch {
        await rm(tmp, { force: true })
      }
      return png
    },
  }
}
