import { documentIdFor, DomainError } from '@quire/domain'
import { verifyReadable, type FileType } from '@quire/extraction'
import type { StageExecutor, StageOutput } from './stage-context.ts'
import { readTextLayerEarly } from './parse.stage.ts'
import { blobStorageUnavailable, documentFailure } from './stage-failures.ts'

/**
 * Checks every stored file is there and can be read, and creates one root document per file. A file of a recognised
 * type whose content is damaged, truncated or encrypted was accepted at intake; here its document fails with the
 * cause (`corrupt_file`, `encrypted_file`) and the job goes on with the others, or fails when none is left.
 */
export const initializationStage: StageExecutor = {
  stage: 'initialization',
  documentsFor: () => [],
  async run({ deps, job }) {
    const failedDocuments: NonNullable<StageOutput['failedDocuments']> = []
    for (const f of job.files) {
      let path: string
      try {
        if (!(await deps.blobs.exists(f.blobKey))) {
          throw new DomainError('not_found', `stored file ${f.position} of job ${job.id} is missing`)
        }
        path = await deps.blobs.localPath(f.blobKey)
      } catch (err) {
        if (err instanceof DomainError) throw err
        throw blobStorageUnavailable(err)
      }
      try {
        // A small text PDF the parse stage reads in-process is read once, here: the read that shows it readable
        // keeps its text layer for that stage. Anything else, or a read that fails, is verified as before.
        if (!(await readTextLayerEarly(deps, f, path))) await verifyReadable(path, f.fileType as FileType)
      } catch (err) {
        const failure = documentFailure(err, `file "${f.fileName}"`)
        failedDocuments.push({ documentId: documentIdFor(job.id, f.position), ...failure })
      }
    }
    return {
      failedDocuments,
      documents: job.files.map((f) => ({
        create: {
          id: documentIdFor(job.id, f.position),
          filePosition: f.position,
          status: 'processing',
          pages: Array.from({ length: f.pageCount }, (_, i) => i + 1),
          metadata: job.metadata,
        },
      })),
    }
  },
}
