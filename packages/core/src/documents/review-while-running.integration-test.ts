// A reviewer's decision taken while the job still runs its stages after validate, on real PostgreSQL through the real
// stages (README, Review: a decision on a parked document is taken whenever the document is parked and its job has
// not ended without a result; it is never written over, and the job finishes, settles and sends job.completed once).
// The decision is made from inside the destination's write: the stage runner then holds the job in memory, with the
// document parked, and has not committed post_processing and destination yet.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { createDestinations, type Destinations } from '@quire/storage'
import { openStoreFixture, purchaseOrderPipeline } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { submitTestJob } from '../jobs/submit-job.test-helper.ts'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { runStages } from '../stages/run-stage.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { type ReviewAction, reviewDocument } from './review-document.ts'

// The OCR engine starts on first use only: these text PDFs never need it.
const fixture = await openStoreFixture({ name: 'review-running', prepare: ensurePlatformPipelines, ocr: true })
const { db, dir, blobs, ocr } = fixture
afterAll(fixture.close)

const outDir = path.join(dir, 'out')
const destinations = createDestinations({ out: { type: 'dir', path: outDir } })

const definition = (hold: 'job' | 'document') =>
  purchaseOrderPipeline({ split: { mode: 'per_page' }, destination: { name: 'out' }, review: { hold } })

/**
 * A two-page split job run up to validate and committed there (post_processing queued): page 2 lacks its PO number
 * and is parked. What the form's profile decides is given as such: Form B's jobs wait for review under review.hold
 * "document" (`jobWaitsForReview` of its profile in @quire/forms), Form A's do not and hold the job.
 */
const FORM_B_CASE = { form: 'B', waitForReview: true, hold: 'document' } as const
const FORM_A_CASE = { form: 'A', waitForReview: false, hold: 'job' } as const

async function jobAfterValidate({ form, waitForReview, hold }: typeof FORM_A_CASE | typeof FORM_B_CASE) {
  const ws = await createWorkspace({ db, name: `review while running ${form}`, apiForm: form, credits: 10 })
  const { jobId } = await submitTestJob({
    db,
    blobs,
    dir,
    workspaceId: ws.id,
    pages: [
      ['PURCHASE ORDER', 'PO Number: PO-100', 'Buyer: Contoso Ltd'],
      ['PURCHASE ORDER', 'Buyer: Fabrikam Inc', 'Delivery: next week'],
    ],
    options: { waitForReview },
  })
  const job = await db.job.findUniqueOrThrow({ where: { id: jobId } })
  await db.job.update({
    where: { id: jobId },
    data: { definition: { ...(job.definition as object), ...definition(hold) } },
  })
  await runStages({ db, blobs, ocr }, { jobId, stage: 'initialization', serves: (s) => s !== 'post_processing' })
  const parked = await db.document.findFirstOrThrow({ where: { jobId, status: 'in_review' } })
  expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('processing')
  return { workspaceId: ws.id, jobId, parkedId: parked.id }
}

/** Runs post_processing onwards, taking `decide` once, while the destination stage writes (nothing committed yet). */
async function runDeciding(jobId: string, decide: () => Promise<void>) {
  let pending: (() => Promise<void>) | null = decide
  const deciding: Destinations = {
    has: (name) => destinations.has(name),
    async write(name, fileName, body) {
      const d = pending
      pending = null
      if (d) await d()
      await destinations.write(name, fileName, body)
    },
  }
  await runStages({ db, blobs, ocr, destinations: deciding }, { jobId, stage: 'post_processing', serves: () => true })
  expect(pending).toBeNull()
}

/** Runs what the job queued for itself (post_processing again), as a stage worker would on its outbox message. */
const runQueued = (jobId: string) =>
  runStages({ db, blobs, ocr, destinations }, { jobId, stage: 'post_processing', serves: () => true })

const state = async (jobId: string) => ({
  job: await db.job.findUniqueOrThrow({ where: { id: jobId } }),
  finished: await db.event.count({ where: { jobId, type: 'job.finished' } }),
  settles: await db.ledgerEntry.count({ where: { jobId, kind: 'settle' } }),
})

const review = (workspaceId: string, documentId: string, action: ReviewAction, poNumber?: string) =>
  reviewDocument({
    db,
    workspaceId,
    documentId,
    action,
    ...(poNumber ? { corrections: { po_number: poNumber } } : {}),
  })

type Delivered = { documents: { status: string; data: { po_number?: { value: string } } }[] }
const deliveredFile = async (jobId: string) =>
  JSON.parse(await readFile(path.join(outDir, `${jobId}.json`), 'utf8')) as Delivered

describe('a review decision while the job still runs its stages (real PostgreSQL, real stages)', () => {
  it('rule: a decision on a parked document of a processing job is taken and kept; the job runs the stages again for it and finishes completed, settled once, one job.finished', async () => {
    const { workspaceId, jobId, parkedId } = await jobAfterValidate(FORM_B_CASE)
    await runDeciding(jobId, () => review(workspaceId, parkedId, 'approve', 'PO-200'))
    // The stages' checkpoint did not write the parked document back over the decision.
    const decided = await db.document.findUniqueOrThrow({ where: { id: parkedId } })
    expect(decided.status).toBe('completed')
    expect((decided.data as { po_number: { value: string } }).po_number.value).toBe('PO-200')
    // Nothing is parked any more: no partial; the decided document missed post_processing and destination, so the
    // job queued them again instead of finishing.
    const between = await state(jobId)
    expect(between.job.status).toBe('processing')
    expect(between).toMatchObject({ finished: 0, settles: 0 })

    await runQueued(jobId)
    const s = await state(jobId)
    expect(s.job.status).toBe('completed')
    expect(s).toMatchObject({ finished: 1, settles: 1 })
    expect(s.job.creditsUsed).toBe(2)
    const file = await deliveredFile(jobId)
    expect(file.documents.map((d) => [d.status, d.data.po_number?.value]).sort()).toEqual([
      ['completed', 'PO-100'],
      ['completed', 'PO-200'],
    ])
    // A stage worker handed the same message again finds the stage done: nothing settles twice.
    await runQueued(jobId)
    expect(await state(jobId)).toMatchObject({ finished: 1, settles: 1 })
  }, 60_000)

  it('rule: a decision that keeps the document parked (escalate) while the job is processing is kept; the job reads partial, and the last decision finishes it once', async () => {
    const { workspaceId, jobId, parkedId } = await jobAfterValidate(FORM_B_CASE)
    await runDeciding(jobId, () => review(workspaceId, parkedId, 'escalate'))
    expect((await db.document.findUniqueOrThrow({ where: { id: parkedId } })).status).toBe('escalated')
    expect((await state(jobId)).job.status).toBe('partial')

    await review(workspaceId, parkedId, 'reject', 'PO-201')
    await runQueued(jobId)
    const s = await state(jobId)
    expect(s.job.status).toBe('completed')
    expect(s).toMatchObject({ finished: 1, settles: 1 })
    expect((await db.document.findUniqueOrThrow({ where: { id: parkedId } })).status).toBe('completed')
  }, 60_000)

  it('rule: a Form A decision taken while its job runs its later stages is not written over by them', async () => {
    const { workspaceId, jobId, parkedId } = await jobAfterValidate(FORM_A_CASE)
    await runDeciding(jobId, () => review(workspaceId, parkedId, 'reject', 'PO-300'))
    const s = await state(jobId)
    expect(s.job.status).toBe('completed')
    expect(s).toMatchObject({ finished: 1, settles: 1 })
    // Form A runs nothing more for a decided document: corrected and passing, it is done.
    const decided = await db.document.findUniqueOrThrow({ where: { id: parkedId } })
    expect(decided.status).toBe('completed')
    expect((decided.data as { po_number: { value: string } }).po_number.value).toBe('PO-300')
  }, 60_000)
})
