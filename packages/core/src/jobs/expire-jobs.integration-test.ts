import { openStoreFixture } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { blockJob } from './error-groups.ts'
import { expireJobs } from './expire-jobs.ts'
import { submitTestJob } from './submit-job.test-helper.ts'

// Retention on real PostgreSQL: a job still running when it reaches retention fails like any failure.

const fixture = await openStoreFixture({ name: 'expire', prepare: ensurePlatformPipelines })
const { db, dir, blobs } = fixture
afterAll(fixture.close)

describe('expireJobs', () => {
  it('a blocked job reaching retention fails at its stage with job_expired: job.failed recorded, hold released, its error group resolved', async () => {
    const ws = await createWorkspace({ db, name: 'expiry test', apiForm: 'A', credits: 100 })
    const { jobId } = await submitTestJob({ db, blobs, dir, workspaceId: ws.id })
    await db.job.update({ where: { id: jobId }, data: { status: 'processing' } })
    expect(
      await blockJob(
        { db },
        {
          jobId,
          stage: 'destination',
          code: 'destination_unavailable',
          message: 'bucket refused the write',
          retryScheduleMs: [3_600_000],
        },
      ),
    ).toBe(true)

    // Only this job is that old: the run's other tests share the database, and their jobs must not expire.
    const DAY = 86_400_000
    await db.job.update({ where: { id: jobId }, data: { createdAt: new Date(Date.now() - 10 * DAY) } })
    expect(await expireJobs({ db, blobs, retentionMs: 9 * DAY })).toBeGreaterThanOrEqual(1)

    const job = await db.job.findUniqueOrThrow({ where: { id: jobId } })
    expect(job).toMatchObject({ status: 'failed', errorCode: 'job_expired', failedStage: 'destination' })
    expect(job.expiredAt).not.toBeNull()
    expect(job.errorGroupId).toBeNull()
    // spec, Events: "job.failed: Job reached failed" (recorded as job.finished, which each form's webhooks map).
    const finished = await db.event.findMany({ where: { jobId, type: 'job.finished' } })
    expect(finished.map((e) => e.data)).toEqual([{ status: 'failed' }])
    expect(await db.creditHold.findUniqueOrThrow({ where: { jobId } })).toMatchObject({ status: 'voided' })
    // README, Operators: "a job leaves the group when ... it fails; the last one out resolves the group".
    const group = await db.errorGroup.findFirstOrThrow({ where: { workspaceId: ws.id } })
    expect(group.status).toBe('resolved')
    expect(await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })).toMatchObject({
      creditsAvailable: 100,
      creditsReserved: 0,
    })
  })
})
