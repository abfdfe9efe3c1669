import { newId } from '@quire/domain'
import { leafDocuments, type StageExecutor } from './stage-context.ts'

/**
 * Delivers results. Quire's destination is its own result store (read through the API and webhooks); test runs
 * never deliver to destinations, so their documents are marked but not handed on.
 */
export const destinationStage: StageExecutor = {
  stage: 'destination',
  documentsFor: () => [],
  async run({ job }) {
    const deliverable = leafDocuments(job).filter((d) => d.status !== 'in_review')
    const isTest = job.environment === 'test'
    return {
      apply: async (tx) => {
        for (const d of deliverable) {
          await tx.document.update({ where: { id: d.id }, data: { status: 'completed' } })
          await tx.documentEvent.create({
            data: { id: newId('dev'), documentId: d.id, type: isTest ? 'destination_skipped_test_run' : 'delivered' },
          })
        }
      },
    }
  },
}
