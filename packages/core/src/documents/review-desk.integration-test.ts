import { openStoreFixture } from '@quire/testing'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { jobIdOfBlobKey } from '../jobs/create-job.ts'
import { submitTestJob } from '../jobs/submit-job.test-helper.ts'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { getDocumentPage, pageImageKey } from './get-document-page.ts'
import { listDocuments } from './list-documents.ts'
import { createPageRenderer, type PageRenderer } from './page-renderer.ts'
import { jobFilesOf } from '../jobs/job-files.ts'

// The review desk's reads on real PostgreSQL and a real blob store (DESIGN, "Review desk"): the document list in
// keyset pages, oldest first for review statuses; page images rendered once in a child process and kept.

const fixture = await openStoreFixture({ name: 'desk', prepare: ensurePlatformPipelines })
const { db, dir, blobs } = fixture
const renderer: PageRenderer = createPageRenderer()
afterAll(async () => {
  await renderer.close()
  await fixture.close()
})

/** A submitted job with one document of `status` (as the stages would have left it). */
async function jobWithDocument(workspaceId: string, status: string, pages: string[][] = [['INVOICE', 'Total: 5 EUR']]) {
  const { jobId } = await submitTestJob({ db, blobs, dir, workspaceId, pages })
  const id = `${jobId.replace('job_', 'doc_')}_0`
  await db.document.create({
    data: { id, jobId, filePosition: 0, status, pages: pages.map((_, i) => i + 1), schemaId: 'invoice' },
  })
  await db.documentEvent.create({
    data: { id: `dev_${id}`, documentId: id, type: 'review_required', data: { problems: ['amount: confidence 0.5'] } },
  })
  return { jobId, id }
}

describe('listDocuments', () => {
  it('review statuses come oldest first, other lists newest first; keyset pages without gaps; expired jobs and other workspaces are left out', async () => {
    const ws = await createWorkspace({ db, name: 'desk list', apiForm: 'B', credits: 100 })
    const other = await createWorkspace({ db, name: 'desk other', apiForm: 'B', credits: 100 })
    const a = await jobWithDocument(ws.id, 'in_review')
    const b = await jobWithDocument(ws.id, 'escalated')
    const c = await jobWithDocument(ws.id, 'completed')
    const gone = await jobWithDocument(ws.id, 'in_review')
    await jobWithDocument(other.id, 'in_review')
    await db.job.update({ where: { id: gone.jobId }, data: { expiredAt: new Date() } })

    const review = { status: ['in_review', 'escalated'] }
    const first = await listDocuments({ db, workspaceId: ws.id, limit: 1, filters: review })
    expect(first.data.map((d) => d.id)).toEqual([a.id])
    expect(first.data[0]).toMatchObject({ review_problems: ['amount: confidence 0.5'], schema_id: 'invoice' })
    expect(first.hasMore).toBe(true)
    const second = await listDocuments({ db, workspaceId: ws.id, limit: 5, cursor: first.nextCursor!, filters: review })
    expect(second.data.map((d) => d.id)).toEqual([b.id])
    expect(second.hasMore).toBe(false)

    const all = await listDocuments({ db, workspaceId: ws.id, limit: 10, filters: {} })
    expect(all.data.map((d) => d.id)).toEqual([c.id, b.id, a.id])
    const byJob = await listDocuments({ db, workspaceId: ws.id, limit: 10, filters: { jobId: b.jobId } })
    expect(byJob.data.map((d) => d.id)).toEqual([b.id])
    const bySchema = await listDocuments({ db, workspaceId: ws.id, limit: 10, filters: { schemaId: 'generic' } })
    expect(bySchema.data).toEqual([])
  })
})

describe('getDocumentPage', () => {
  it('renders a page once (at most 2000 px), keeps it beside the file where the unowned-blob sweep finds its job, and reads it back from the store', async () => {
    const ws = await createWorkspace({ db, name: 'desk pages', apiForm: 'B', credits: 100 })
    const { jobId, id } = await jobWithDocument(ws.id, 'in_review', [['INVOICE'], ['Page two']])
    const read = (page: number, workspaceId = ws.id) =>
      getDocumentPage({ db, blobs, renderer, workspaceId, documentId: id, page })
    const page2 = await read(2)
    const png = page2.image()
    const bytes = Buffer.from((await png) as Buffer)
    const meta = await sharp(bytes).metadata()
    expect(meta.format).toBe('png')
    expect(Math.max(meta.width!, meta.height!)).toBe(2000)
    const [file] = jobFilesOf(await db.job.findUniqueOrThrow({ where: { id: jobId }, include: { files: true } }))
    const key = pageImageKey(file!.blobKey, 2)
    expect(await blobs.exists(key)).toBe(true)
    expect(jobIdOfBlobKey(key)).toBe(jobId)
    // Kept: the second read streams the stored image, whatever the renderer would do.
    const again = await getDocumentPage({
      db,
      blobs,
      renderer: { render: () => Promise.reject(new Error('rendered twice')), close: async () => {} },
      workspaceId: ws.id,
      documentId: id,
      page: 2,
    })
    expect(again.etag).toBe(page2.etag)
    const chunks: Buffer[] = []
    for await (const c of (await again.image()) as AsyncIterable<Buffer>) chunks.push(c)
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true)

    await expect(read(3)).rejects.toMatchObject({ code: 'not_found' })
    const stranger = await createWorkspace({ db, name: 'desk stranger', apiForm: 'B', credits: 1 })
    await expect(read(1, stranger.id)).rejects.toMatchObject({ code: 'not_found' })
    // Past retention the rows are gone and the id still names its job: job_expired.
    await db.document.delete({ where: { id } })
    await db.job.update({ where: { id: jobId }, data: { expiredAt: new Date() } })
    await expect(read(1)).rejects.toMatchObject({ code: 'job_expired' })
  })

  it('a render past its time ends its child process and fails the request (a slow page never holds the renderer)', async () => {
    const ws = await createWorkspace({ db, name: 'desk slow', apiForm: 'B', credits: 100 })
    const { jobId } = await jobWithDocument(ws.id, 'in_review')
    const [file] = jobFilesOf(await db.job.findUniqueOrThrow({ where: { id: jobId }, include: { files: true } }))
    const local = await blobs.localPath(file!.blobKey)
    const hasty = createPageRenderer({ timeoutMs: 1 })
    try {
      await expect(hasty.render(local, 'pdf', 1)).rejects.toThrow(/exited \(SIGKILL\)/)
    } finally {
      await hasty.close()
    }
  })
})
