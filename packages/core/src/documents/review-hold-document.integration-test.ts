// review.hold "document" on real PostgreSQL, through the real stages (DESIGN, Review: "the documents that pass go on
// through post_processing and destination while the parked ones wait; a Form B job then reads `partial` until the
// last parked document is decided, and finishes, settles and sends `job.completed` once"; issue 38: "Cancel while
// `partial` cancels the held documents only and settles what was done").
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createPrisma, type Db } from '@quire/db'
import { createOcrEngine, type OcrEngine } from '@quire/extraction'
import { type BlobStore, createFsBlobStore } from '@quire/storage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cancelJob } from '../jobs/cancel-job.ts'
import { submitTestJob } from '../jobs/submit-job.test-helper.ts'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { runStages } from '../stages/run-stage.ts'
import type { StageDeps } from '../stages/stage-context.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { reviewDocument } from './review-document.ts'
import { purchaseOrderPipeline } from '@quire/testing'

let db: Db
let dir: string
let blobs: BlobStore
let deps: StageDeps
let ocr: OcrEngine

beforeAll(async () => {
  db = createPrisma(process.env.DATABASE_URL!)
  dir = await mkdtemp(path.join(tmpdir(), 'quire-hold-document-'))
  blobs = createFsBlobStore({ dir: path.join(dir, 'blobs') })
  ocr = createOcrEngine({ workers: 1 })
  deps = { db, blobs, ocr }
  await ensurePlatformPipelines(db)
})
afterAll(async () => {
  await ocr.close()
  await db.$disconnect()
  await rm(dir, { recursive: true, force: true })
})

const definition = purchaseOrderPipeline({ split: { mode: 'per_page' }, review: { hold: 'document' } })

/** A two-page split job told to wait for review (as Form B submits): page 2 lacks its PO number and is parked. */
async function partialJob() {
  const ws = await createWorkspace({ db, name: 'hold document', apiForm: 'B', credits: 10 })
  const { jobId } = await submitTestJob({
    db,
    blobs,
    dir,
    workspaceId: ws.id,
    pages: [
      ['PURCHASE ORDER', 'PO Number: PO-100', 'Buyer: Contoso Ltd'],
      ['PURCHASE ORDER', 'Buyer: Fabrikam Inc', 'Delivery: next week'],
    ],
    options: { waitForReview: true },
  })
  // The job carries its pipeline's definition: this one holds documents, not the job.
  const job = await db.job.findUniqueOrThrow({ where: { id: jobId } })
  await db.job.update({
    where: { id: jobId },
    data: { definition: { ...(job.definition as object), ...definition } },
  })
  await runStages(deps, { jobId, stage: 'initialization', serves: () => true })
  const docs = await db.document.findMany({ where: { jobId, status: { not: 'split' } }, orderBy: { pages: 'asc' } })
  return { workspaceId: ws.id, jobId, docs }
}

const state = async (jobId: string) => {
  const job = await db.job.findUniqueOrThrow({ where: { id: jobId } })
  const finished = await db.event.count({ where: { jobId, type: 'job.finished' } })
  // As the ledger reads it: a lone submission's pending hold is kept in its job row until it is resolved.
  const [hold] = await db.$queryRaw<{ status: string; amount: number; posted: number | null }[]>`
    SELECT status::text AS status, amount, posted FROM ledger_holds WHERE job_id = ${jobId}`
  const settles = await db.ledgerEntry.count({ where: { jobId, kind: 'settle' } })
  return { job, finished, hold, settles }
}

/** Runs the stages the review queued (post_processing onwards), as a stage worker would on its outbox message. */
async function runQueued(jobId: string) {
  await runStages(deps, { jobId, stage: 'post_processing', serves: () => true })
}

describe('review.hold "document" on real PostgreSQL', () => {
  it('DESIGN hold=document: the passing document goes through post_processing and destination; the job waits partial, unsettled, no job.finished', async () => {
    const { jobId, docs } = await partialJob()
    expect(docs.map((d) => d.status)).toEqual(['completed', 'in_review'])
    const s = await state(jobId)
    expect(s.job.status).toBe('partial')
    expect(s.job.completedAt).toBeNull()
    expect(s.finished).toBe(0)
    expect(s.hold?.status).toBe('pending')
    const runs = await db.stageRun.findMany({ where: { jobId } })
    expect(runs.map((r) => `${r.stage}:${r.status}`)).toEqual(
      expect.arrayContaining(['post_processing:completed', 'destination:completed']),
    )
  }, 60_000)

  it('DESIGN hold=document: escalate keeps it partial; approving the last parked document finishes completed, settles once, one job.finished', async () => {
    const { workspaceId, jobId, docs } = await partialJob()
    const parked = docs[1]!
    await reviewDocument({ db, workspaceId, documentId: parked.id, action: 'escalate' })
    expect((await state(jobId)).job.status).toBe('partial')
    await reviewDocument({
      db,
      workspaceId,
      documentId: parked.id,
      action: 'approve',
      corrections: { po_number: 'PO-200' },
    })
    expect((await state(jobId)).job.status).toBe('processing')
    await runQueued(jobId)
    const s = await state(jobId)
    expect(s.job.status).toBe('completed')
    expect(s.finished).toBe(1)
    expect(s.settles).toBe(1)
    expect(s.job.creditsUsed).toBe(2)
    const after = await db.document.findMany({ where: { jobId, status: { not: 'split' } } })
    expect(after.map((d) => d.status)).toEqual(['completed', 'completed'])
    // A stage worker handed the same stage again finds it done: no second settlement or job.finished.
    await runQueued(jobId)
    expect(await state(jobId)).toMatchObject({ finished: 1, settles: 1 })
  }, 60_000)

  it('DESIGN hold=document: reject with corrected data is validated again and goes on; the job completes', async () => {
    const { workspaceId, jobId, docs } = await partialJob()
    await reviewDocument({
      db,
      workspaceId,
      documentId: docs[1]!.id,
      action: 'reject',
      corrections: { po_number: 'PO-201' },
    })
    await runQueued(jobId)
    const s = await state(jobId)
    expect(s.job.status).toBe('completed')
    expect(s.finished).toBe(1)
    const fixed = await db.document.findUniqueOrThrow({ where: { id: docs[1]!.id } })
    expect(fixed.status).toBe('completed')
  }, 60_000)

  it('rule: the rerun after review post-processes and delivers only the newly decided document; the delivered one is not written again', async () => {
    const { workspaceId, jobId, docs } = await partialJob()
    const [passing, parked] = [docs[0]!, docs[1]!]
    await reviewDocument({
      db,
      workspaceId,
      documentId: parked.id,
      action: 'approve',
      corrections: { po_number: 'PO-202' },
    })
    await runQueued(jobId)
    expect((await state(jobId)).job.status).toBe('completed')
    // The document delivered before the review keeps its row as the first run left it, and one delivery line.
    const after = await db.document.findUniqueOrThrow({ where: { id: passing.id } })
    expect(after.updatedAt).toEqual(passing.updatedAt)
    expect(after.data).toEqual(passing.data)
    const deliveries = (documentId: string) => db.documentEvent.count({ where: { documentId, type: 'delivered' } })
    expect(await deliveries(passing.id)).toBe(1)
    // The decided one went through post_processing and destination once, in the rerun.
    expect(await deliveries(parked.id)).toBe(1)
    const decided = await db.document.findUniqueOrThrow({ where: { id: parked.id } })
    expect(decided.status).toBe('completed')
    expect(decided.updatedAt.getTime()).toBeGreaterThan(parked.updatedAt.getTime())
  }, 60_000)

  it('issue 38 cancel while partial: the held document is cancelled, the delivered one settled, the job cancelled', async () => {
    const { workspaceId, jobId, docs } = await partialJob()
    await cancelJob({ db, workspaceId, jobId })
    const s = await state(jobId)
    expect(s.job.status).toBe('cancelled')
    expect(s.hold?.status).toBe('posted')
    expect(s.hold?.posted).toBe(1)
    expect(s.job.creditsUsed).toBe(1)
    expect(s.settles).toBe(1)
    const after = await db.document.findMany({ where: { jobId, status: { not: 'split' } }, orderBy: { pages: 'asc' } })
    expect(after.map((d) => d.status)).toEqual(['completed', 'cancelled'])
    await expect(reviewDocument({ db, workspaceId, documentId: docs[1]!.id, action: 'approve' })).rejects.toMatchObject(
      { code: 'DOCUMENT_NOT_IN_REVIEW' },
    )
  }, 60_000)
})
