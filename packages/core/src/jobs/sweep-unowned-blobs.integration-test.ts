import { utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { newId } from '@quire/domain'
import { openStoreFixture } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { blobKeyFor, jobIdOfBlobKey } from './create-job.ts'
import { submitTestJob } from './submit-job.test-helper.ts'
import { jobFilesOf } from './job-files.ts'
import { sweepUnownedBlobs } from './sweep-unowned-blobs.ts'

// The sweep of stored files no live job owns, on real PostgreSQL and a real filesystem store.

const fixture = await openStoreFixture({ name: 'sweep-blobs', prepare: ensurePlatformPipelines })
const { db, dir, blobDir: blobRoot, blobs } = fixture
afterAll(fixture.close)

const HOUR = 3_600_000
/** Stores a file under `key` last modified `ageMs` ago. */
async function store(key: string, ageMs: number) {
  const tmp = path.join(dir, `upload-${Math.random().toString(36).slice(2)}`)
  await writeFile(tmp, key)
  await blobs.putFile(key, tmp)
  await age(key, ageMs)
}
const age = async (key: string, ageMs: number) => {
  const t = new Date(Date.now() - ageMs)
  await utimes(path.join(blobRoot, key), t, t)
}
const keys = async () => {
  const out: string[] = []
  for await (const b of blobs.list()) out.push(b.key)
  return out.sort()
}

describe('jobIdOfBlobKey', () => {
  it('reads the job id back from every key blobKeyFor makes, and nothing from other keys', () => {
    for (let i = 0; i < 50; i++) {
      const jobId = newId('job')
      expect(jobIdOfBlobKey(blobKeyFor(newId('ws'), jobId, i % 3))).toBe(jobId)
    }
    const jobId = newId('job')
    for (const key of [
      `ws_1/zz/${jobId}-0`, // the directory is not the id's last two characters
      `ws_1/${jobId.slice(-2)}/${jobId}`, // no position
      `${jobId.slice(-2)}/${jobId}-0`, // no workspace
      `ws_1/${jobId.slice(-2)}/${jobId}-0/x`,
      'imports/invoice.pdf',
    ])
      expect(jobIdOfBlobKey(key)).toBeUndefined()
  })
})

describe('sweepUnownedBlobs', () => {
  it('deletes old files of jobs that never committed or expired; keeps live jobs, recent files and foreign keys', async () => {
    const ws = await createWorkspace({ db, name: 'sweep test', apiForm: 'B', credits: 100 })
    const live = await submitTestJob({ db, blobs, dir, workspaceId: ws.id })
    const expired = await submitTestJob({ db, blobs, dir, workspaceId: ws.id })
    // Retention committed, then the process died before deleting the file.
    await db.job.update({ where: { id: expired.jobId }, data: { expiredAt: new Date() } })
    const [liveKey, expiredKey] = await Promise.all(
      [live.jobId, expired.jobId].map(
        async (id) =>
          jobFilesOf(await db.job.findUniqueOrThrow({ where: { id }, include: { files: true } }))[0]!.blobKey,
      ),
    )
    await age(liveKey!, 2 * HOUR)
    await age(expiredKey!, 2 * HOUR)
    // Submissions whose statement never committed: two old files of one job, one of another, one still recent.
    const never = [newId('job'), newId('job'), newId('job')]
    const uncommitted = [
      blobKeyFor(ws.id, never[0]!, 0),
      blobKeyFor(ws.id, never[0]!, 1),
      blobKeyFor(ws.id, never[1]!, 0),
    ]
    for (const k of uncommitted) await store(k, 2 * HOUR)
    const recent = blobKeyFor(ws.id, never[2]!, 0)
    await store(recent, 10 * 60_000)
    const foreign = ['imports/invoice.pdf', `${ws.id}/zz/${never[0]}-0`]
    for (const k of foreign) await store(k, 2 * HOUR)

    // A batch of 2 keys: the job lookups span several batches.
    const result = await sweepUnownedBlobs({ db, blobs, minAgeMs: HOUR, batch: 2 })
    expect(result.deleted).toBe(uncommitted.length + 1)
    expect(result.listed).toBeGreaterThanOrEqual(7)
    expect(await keys()).toEqual([liveKey!, recent, ...foreign].sort())

    // Once the recent file is old enough, the next sweep takes it; nothing else changes.
    expect(await sweepUnownedBlobs({ db, blobs, minAgeMs: HOUR, now: new Date(Date.now() + HOUR) })).toMatchObject({
      deleted: 1,
    })
    expect(await keys()).toEqual([liveKey!, ...foreign].sort())
  })
})
