import { childDocumentIdFor } from '@quire/domain'
import { classify, splitPages } from '@quire/extraction'
import { rootDocuments, type StageExecutor } from './stage-context.ts'

/** Splits each file into documents per the pipeline's split mode and classifies them by keywords. */
export const splitClassifyStage: StageExecutor = {
  stage: 'split_classify',
  documentsFor: rootDocuments,
  async run({ job, definition }) {
    const writes: Array<(tx: Parameters<NonNullable<import('./stage-context.ts').StageOutput['apply']>>[0]) => Promise<unknown>> = []
    for (const doc of rootDocuments(job)) {
      const pages = ((doc.content as { pages?: string[] } | null)?.pages ?? []) as string[]
      const groups = splitPages(pages, definition.split.mode, definition.document_types)
      if (groups.length <= 1) {
        const c = classify(pages.join('\n\n'), definition.document_types)
        writes.push((tx) =>
          tx.document.update({ where: { id: doc.id }, data: { type: c.type, schemaId: c.schemaId } }),
        )
        continue
      }
      writes.push((tx) =>
        tx.document.update({ where: { id: doc.id }, data: { status: 'split' } }),
      )
      groups.forEach((g, i) => {
        const childPages = g.pages.map((n) => pages[n - 1] ?? '')
        writes.push((tx) =>
          tx.document.upsert({
            where: { id: childDocumentIdFor(doc.id, i + 1) },
            update: {},
            create: {
              id: childDocumentIdFor(doc.id, i + 1),
              jobId: job.id,
              parentId: doc.id,
              filePosition: doc.filePosition,
              status: 'processing',
              type: g.type,
              schemaId: g.schemaId,
              pages: g.pages,
              metadata: (doc.metadata ?? undefined) as object | undefined,
              content: { pages: childPages },
            },
          }),
        )
      })
    }
    return {
      apply: async (tx) => {
        for (const w of writes) await w(tx)
      },
    }
  },
}
