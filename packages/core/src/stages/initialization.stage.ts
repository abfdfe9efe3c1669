import { documentIdFor, DomainError } from '@quire/domain'
import type { StageExecutor } from './stage-context.ts'

/** Checks every stored file is there and creates one root document per file. */
export const initializationStage: StageExecutor = {
  stage: 'initialization',
  documentsFor: () => [],
  async run({ deps, job }) {
    for (const f of job.files) {
      if (!(await deps.blobs.exists(f.blobKey))) {
        throw new DomainError('not_found', `stored file ${f.position} of job ${job.id} is missing`)
      }
    }
    return {
      apply: async (tx) => {
        await tx.document.createMany({
          skipDuplicates: true,
          data: job.files.map((f) => ({
            id: documentIdFor(job.id, f.position),
            jobId: job.id,
            filePosition: f.position,
            status: 'processing',
            pages: Array.from({ length: f.pageCount }, (_, i) => i + 1),
            metadata: (job.metadata ?? undefined) as object | undefined,
          })),
        })
      },
    }
  },
}
