import { readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { FILE_TYPES, newId } from '@quire/domain'
import { DIRECT_DISPATCH_GRACE_MS, FANOUT_QUEUE, PRIORITY, jobKeys } from '@quire/queues'
import { listLedgerEntries, reconcileLedger, reserveCredits, settleCredits, voidCredits } from '@quire/ledger'
import { openStoreFixture, waitFor } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createPipeline,
  createPipelineVersion,
  ensurePlatformPipelines,
  PLATFORM_PARSE_PIPELINE_ID,
  publishPipelineVersion,
  resolvePipeline,
} from '../pipelines/pipelines.ts'
import {
  authenticateApiKey,
  createApiKey,
  type KeyState,
  PrincipalChanged,
  revokeApiKey,
} from '../workspaces/api-keys.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { INVOICE_LINES, textPdf } from '../../../../tests/fixtures/make-fixtures.ts'
import { createJob, type JobOptions } from './create-job.ts'
import { jobFilesOf } from './job-files.ts'
import { getJob } from './read-jobs.ts'
import { intakeFile, recordQuarantine } from './inspect-files.ts'
import { submitTestJob } from './submit-job.test-helper.ts'

// The submission path on real PostgreSQL: what createJob writes in its few statements is exactly what reads see, a
// refusal writes nothing, and the one-statement lookups (key, pipeline) decide as the rules say.

const fixture = await openStoreFixture({ name: 'create-job', prepare: ensurePlatformPipelines })
const { db, dir, blobDir, blobs } = fixture
afterAll(fixture.close)

/** One text PDF submitted as the API would (the createJob options given override a plain async job's). */
const submit = (workspaceId: string, options?: Partial<JobOptions>, confirmKey?: KeyState) =>
  submitTestJob({ db, blobs, dir, workspaceId, options, confirmKey })

type HoldRow = { id: string; workspaceId: string; jobId: string; amount: number; status: string; period: Date }

/** A workspace's holds as the ledger reads them (`ledger_holds`: the table's and those kept in job rows). */
const holdsOf = (where: { workspaceId: string } | { jobId: string }) =>
  db.$queryRaw<HoldRow[]>`
    SELECT id, workspace_id AS "workspaceId", job_id AS "jobId", amount, status::text AS status, period
    FROM ledger_holds
    WHERE workspace_id = ${'workspaceId' in where ? where.workspaceId : null}::text
       OR job_id = ${'jobId' in where ? where.jobId : null}::text
    ORDER BY created_at, id`

/** Everything a submission may write for a job: its files and hold wherever they are kept. */
async function written(jobId: string) {
  const job = await db.job.findUnique({ where: { id: jobId }, include: { files: true } })
  return {
    job,
    files: job ? jobFilesOf(job) : [],
    stageRuns: await db.stageRun.findMany({ where: { jobId } }),
    events: await db.event.findMany({ where: { jobId } }),
    outbox: await db.outboxMessage.findMany({ where: { jobKey: { startsWith: jobId } } }),
    hold: (await holdsOf({ jobId }))[0] ?? null,
  }
}

describe('createJob', () => {
  it('writes the job, its file, the source.exited event, the queued stage and the hold, and no stage run; answers what a read sees', async () => {
    const ws = await createWorkspace({ db, name: 'create-job test', apiForm: 'B', credits: 10 })
    const submittedAt = Date.now()
    const { jobId, accepted, dispatch, pipeline } = await submit(ws.id, {
      priority: 'high',
      environment: 'test',
      clientReferenceId: 'ref-1',
      metadata: { a: 'b' },
      waitForReview: true,
    })
    expect(await getJob({ db, workspaceId: ws.id, jobId })).toEqual(accepted)
    expect(accepted).toMatchObject({
      status: 'queued',
      stageNow: 'initialization',
      priority: 'high',
      environment: 'test',
      clientReferenceId: 'ref-1',
      metadata: { a: 'b' },
      pageCount: 1,
      creditsReserved: 1,
      files: [{ fileName: 'invoice.pdf', fileType: 'pdf', mimeType: 'application/pdf', pageCount: 1 }],
      stages: [],
    })
    const w = await written(jobId)
    // The source stage ends as the job is created: its event says so, and no stage run is written for it.
    expect(w.stageRuns).toEqual([])
    expect(w.job).toMatchObject({ waitForReview: true, definition: pipeline.definition, errorGroupId: null })
    const blobKey = `${ws.id}/${jobId.slice(-2)}/${jobId}-0`
    expect(w.files).toEqual([expect.objectContaining({ position: 0, blobKey })])
    expect(await blobs.exists(blobKey)).toBe(true)
    expect(w.events).toEqual([
      expect.objectContaining({ type: 'stage.exited', stage: 'source', transition: 'exited', workspaceId: ws.id }),
    ])
    expect(w.outbox).toEqual([
      expect.objectContaining({
        queue: 'stage-initialization',
        name: 'initialization',
        jobKey: jobKeys.stage(jobId, 'initialization'),
        payload: { jobId },
        priority: PRIORITY.high,
        delayMs: null,
        replaceFinished: false,
        dispatchedAt: null,
      }),
    ])
    // The first stage's row is the submitter's to send (direct dispatch): the relay leaves it alone for the grace.
    expect(dispatch).toEqual([
      expect.objectContaining({ id: w.outbox[0]!.id, queue: 'stage-initialization', job_key: w.outbox[0]!.jobKey }),
    ])
    const graceEnds = w.outbox[0]!.dispatchAfter!.getTime()
    expect(graceEnds).toBeGreaterThanOrEqual(submittedAt + DIRECT_DISPATCH_GRACE_MS - 1000)
    expect(graceEnds).toBeLessThanOrEqual(Date.now() + DIRECT_DISPATCH_GRACE_MS + 1000)
    // No webhook in the workspace: the event is stored as fanned out and becomes no queue work.
    expect(w.events[0]!.fannedOutAt).toEqual(w.events[0]!.createdAt)
    expect(w.hold).toMatchObject({ id: `hold_${jobId}`, workspaceId: ws.id, amount: 1, status: 'pending' })
    // A lone submission of one file keeps the file and the pending hold in the job row (migration
    // *_lone_job_file_and_hold_in_job_row): no job_files row, no credit_holds row until the hold is resolved.
    const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1))
    expect(w.job).toMatchObject({ blobKey, fileName: 'invoice.pdf', fileType: 'pdf', holdPeriod: month })
    expect(w.hold?.period).toEqual(month)
    expect(await db.jobFile.count({ where: { jobId } })).toBe(0)
    expect(await db.creditHold.count({ where: { jobId } })).toBe(0)
    const balance = await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })
    expect([balance.creditsAvailable, balance.creditsReserved]).toEqual([9, 1])
    expect(await reconcileLedger(db, { workspaceId: ws.id })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })

  it('no credits, no job: a refused reservation writes nothing and removes the stored file', async () => {
    const ws = await createWorkspace({ db, name: 'create-job refusal', apiForm: 'B', credits: 0 })
    const before = await db.outboxMessage.count()
    const err = await submit(ws.id).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { required: 1 } })
    expect(await db.job.count({ where: { workspaceId: ws.id } })).toBe(0)
    expect(await db.event.count({ where: { workspaceId: ws.id } })).toBe(0)
    expect(await db.outboxMessage.count()).toBe(before)
    expect(await holdsOf({ workspaceId: ws.id })).toEqual([])
    for (const jobDir of await readdir(path.join(blobDir, ws.id))) {
      expect(await readdir(path.join(blobDir, ws.id, jobDir))).toEqual([])
    }
  })

  it("the file moves into the store while the statement runs: a job written whose file could not be stored fails at once (file_not_stored, hold released) and the move's error is thrown; a refusal with a failed move writes nothing", async () => {
    const ws = await createWorkspace({ db, name: 'create-job lost file', apiForm: 'B', credits: 10 })
    const broke = await createWorkspace({ db, name: 'create-job lost file, no credits', apiForm: 'B', credits: 0 })
    const pipeline = await resolvePipeline({ db, workspaceId: ws.id, allowDraftVersion: false })
    // A file taken in and then gone from its temporary path before createJob: the move (rename, then copy) fails.
    const lostUpload = async (workspaceId: string) => {
      const bytes = await textPdf([INVOICE_LINES])
      const tempPath = path.join(dir, `upload-${newId('lost')}.pdf`)
      await writeFile(tempPath, bytes)
      const file = await intakeFile({
        db,
        workspaceId,
        file: { tempPath, fileName: 'invoice.pdf', sizeBytes: bytes.length },
        definition: pipeline.definition,
        formTypes: FILE_TYPES,
      })
      await rm(tempPath)
      return file
    }
    const create = async (workspaceId: string) =>
      createJob({
        db,
        blobs,
        workspaceId,
        pipeline,
        files: [await lostUpload(workspaceId)],
        options: { priority: 'standard', executionMode: 'async', environment: 'production' },
      })
    expect(await create(ws.id).catch((e: unknown) => e)).toMatchObject({ code: 'ENOENT' })
    const [job] = await db.job.findMany({ where: { workspaceId: ws.id } })
    expect(job).toMatchObject({ status: 'failed', errorCode: 'file_not_stored', creditsUsed: 0 })
    expect(await holdsOf({ jobId: job!.id })).toMatchObject([{ status: 'voided' }])
    const balance = await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })
    expect([balance.creditsAvailable, balance.creditsReserved]).toEqual([10, 0])
    // The job's end as every failed job's (`job.finished`: `job.failed` in both forms' webhooks).
    expect(await db.event.findMany({ where: { jobId: job!.id }, select: { type: true } })).toContainEqual({
      type: 'job.finished',
    })
    expect(await reconcileLedger(db, { workspaceId: ws.id })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })

    // Refused (no credits) while its move fails too: no job, nothing in the store.
    expect(await create(broke.id).catch((e: unknown) => e)).toMatchObject({ code: 'PAYMENT_REQUIRED' })
    expect(await db.job.count({ where: { workspaceId: broke.id } })).toBe(0)
    for (const jobDir of await readdir(path.join(blobDir, broke.id)).catch(() => [])) {
      expect(await readdir(path.join(blobDir, broke.id, jobDir))).toEqual([])
    }
  })

  it('a job still needs its workspace: the foreign key is checked at commit (migration *_jobs_workspace_fk_at_commit)', async () => {
    const ghost = newId('ws')
    const jobId = newId('job')
    let inserted = false
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`
          INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, page_count,
                            credits_reserved)
          VALUES (${jobId}, ${ghost}, 'parse', 1, '{}', 'queued', 1, 1)`
        inserted = true // deferred: the statement passes, the commit fails
      }),
    ).rejects.toThrow(/foreign ?key/i)
    expect(inserted).toBe(true)
    expect(await db.job.count({ where: { id: jobId } })).toBe(0)
  })

  it('deleting a workspace still removes its jobs at once (the cascade is not deferred)', async () => {
    const ws = await createWorkspace({ db, name: 'create-job cascade', apiForm: 'B', credits: 10 })
    const { jobId } = await submit(ws.id)
    await db.$transaction(async (tx) => {
      await tx.workspace.delete({ where: { id: ws.id } })
      expect(await tx.job.count({ where: { id: jobId } })).toBe(0)
    })
  })
})

describe('createJob alone: one plain statement (submission-groups.ts, SUBMIT_ONE)', () => {
  it("a lone job's hold kept in its row is resolved once under racing settlements and voids, moved into credit_holds, and listed and reconciled throughout", async () => {
    const ws = await createWorkspace({ db, name: 'hold in the job row', apiForm: 'B', credits: 10 })
    const { jobId } = await submit(ws.id)
    expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).holdPeriod).not.toBeNull()
    // Pending in the job row: the ledger lists it as the reserve entry, and reconciliation counts it.
    const listed = await listLedgerEntries(db, { workspaceId: ws.id, limit: 10, jobId })
    expect(listed.data.map((e) => [e.id, e.kind, e.amount])).toEqual([[`hold_${jobId}`, 'reserve', 1]])
    expect(await reconcileLedger(db, { workspaceId: ws.id })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
    // Three callers resolve it at once: the first to move it out of the row wins; the others find it resolved.
    const results = await Promise.all([
      settleCredits(db, { jobId, used: 1 }),
      voidCredits(db, { jobId }),
      settleCredits(db, { jobId, used: 1 }),
    ])
    expect(results.filter((r) => r !== null)).toHaveLength(1)
    expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).holdPeriod).toBeNull()
    expect(await holdsOf({ jobId })).toEqual([expect.objectContaining({ id: `hold_${jobId}`, amount: 1 })])
    expect((await holdsOf({ jobId }))[0]!.status).not.toBe('pending')
    expect(await db.creditHold.count({ where: { jobId } })).toBe(1)
    const balance = await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })
    expect(balance.creditsReserved).toBe(0)
    expect(balance.creditsAvailable + balance.creditsSpent).toBe(10)
    expect(await reconcileLedger(db, { workspaceId: ws.id })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
    const after = await listLedgerEntries(db, { workspaceId: ws.id, limit: 10, jobId })
    expect(after.data.filter((e) => e.kind === 'reserve').map((e) => e.id)).toEqual([`hold_${jobId}`])
  })

  it('the ledger lists holds of job rows and of credit_holds as one, newest first, across pages', async () => {
    const ws = await createWorkspace({ db, name: 'holds listed', apiForm: 'B', credits: 10 })
    const jobs: string[] = []
    for (let i = 0; i < 4; i++) jobs.push((await submit(ws.id)).jobId)
    // Two of them resolved (their holds now credit_holds rows), two still pending in their job rows.
    await voidCredits(db, { jobId: jobs[0]! })
    await voidCredits(db, { jobId: jobs[2]! })
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await listLedgerEntries(db, { workspaceId: ws.id, limit: 1, cursor, kind: 'reserve' })
      seen.push(...page.data.map((e) => e.job_id!))
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    // KEYSET_ORDER: created_at, then the hold's id, both descending (jobs made in one millisecond tie on the time).
    const rows = await db.job.findMany({ where: { id: { in: jobs } }, select: { id: true, createdAt: true } })
    const newestFirst = rows
      .map((r) => ({ jobId: r.id, at: r.createdAt.getTime(), holdId: `hold_${r.id}` }))
      .sort((a, b) => b.at - a.at || (a.holdId < b.holdId ? 1 : -1))
      .map((r) => r.jobId)
    expect(seen).toEqual(newestFirst)
  })

  it('a job past the spending cap is refused with that reason and writes nothing', async () => {
    const ws = await createWorkspace({ db, name: 'alone cap', apiForm: 'B', credits: 10, spendingCap: 0 })
    const err = await submit(ws.id).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'PAYMENT_REQUIRED', message: expect.stringMatching(/spending cap/) })
    expect(await db.job.count({ where: { workspaceId: ws.id } })).toBe(0)
    expect(await holdsOf({ workspaceId: ws.id })).toEqual([])
    expect(await db.ledgerEntry.count({ where: { workspaceId: ws.id, jobId: { not: null } } })).toBe(0)
    const balance = await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })
    expect([balance.creditsAvailable, balance.creditsReserved]).toEqual([10, 0])
  })

  it('a balance emptied between its snapshot and its reservation: refused for credits (submit_jobs decides), nothing written', async () => {
    const ws = await createWorkspace({ db, name: 'alone raced', apiForm: 'B', credits: 10 })
    // Another transaction reserves the whole balance for another job (through the ledger, so the books stay
    // balanced) and holds the workspace while the submission waits for it.
    const otherJob = newId('job')
    const { submitted } = await db.$transaction(
      async (tx) => {
        expect(await reserveCredits(tx, { workspaceId: ws.id, jobId: otherJob, amount: 10 })).toMatchObject({
          ok: true,
        })
        const pending = submit(ws.id).catch((e: unknown) => e)
        await waitFor(
          async () =>
            (
              await db.$queryRaw<{ n: number }[]>`
                SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND datname = current_database()`
            )[0]!.n > 0 || undefined,
          { timeoutMs: 10_000, intervalMs: 20, message: 'the submission never waited for the workspace' },
        )
        return { submitted: pending } // not awaited here: it waits for this transaction's commit
      },
      { timeout: 20_000 },
    )
    expect(await submitted).toMatchObject({
      code: 'PAYMENT_REQUIRED',
      message: expect.stringMatching(/not enough credits/),
    })
    expect(await db.job.count({ where: { workspaceId: ws.id } })).toBe(0)
    expect((await holdsOf({ workspaceId: ws.id })).map((h) => h.jobId)).toEqual([otherJob])
    const balance = await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })
    expect([balance.creditsAvailable, balance.creditsReserved]).toEqual([0, 10])
    expect(await reconcileLedger(db, { workspaceId: ws.id })).toMatchObject({ driftCredits: 0, holdAnomalies: [] })
  })
})

describe('createJob confirming a key read earlier (confirmKey)', () => {
  it('writes when the key still has the principal read; after a new default pipeline, a newer published version or a revocation it writes nothing, gives the file back and throws PrincipalChanged', async () => {
    const ws = await createWorkspace({ db, name: 'confirm key', apiForm: 'B', credits: 10 })
    const { key, id: keyId } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write'] })
    const read = async () => (await authenticateApiKey({ db, key }))!.asRead
    const jobCount = () => db.job.count({ where: { workspaceId: ws.id } })
    const balance = async () => (await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })).creditsAvailable
    /** A submission under `state`; on a refusal, whether its upload is back at its temporary path. */
    const submitUnder = async (state: { keyHash: string; fingerprint: string }) => {
      const err = await submit(ws.id, {}, state).catch((e: { err: unknown; tempPath: string }) => e)
      if (!('err' in err)) return 'written'
      expect(err.err).toBeInstanceOf(PrincipalChanged)
      expect((await readdir(dir)).includes(path.basename(err.tempPath))).toBe(true)
      return 'refused'
    }

    const first = await read()
    expect(await submitUnder(first)).toBe('written')
    expect(await read()).toEqual(first) // a job changes nothing the key's principal holds

    const p = await createPipeline({ db, workspaceId: ws.id, name: 'p', definition: {} })
    await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, version: 1 })
    await db.workspace.update({ where: { id: ws.id }, data: { defaultPipelineId: p.id } })
    expect(await submitUnder(first)).toBe('refused')
    const second = await read()
    expect(second).not.toEqual(first)
    expect(await submitUnder(second)).toBe('written')

    await createPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, definition: {} })
    await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, version: 2 })
    expect(await submitUnder(second)).toBe('refused')
    const third = await read()

    const [jobs, credits] = [await jobCount(), await balance()]
    await revokeApiKey({ db, workspaceId: ws.id, keyId })
    expect(await submitUnder(third)).toBe('refused')
    expect([await jobCount(), await balance()]).toEqual([jobs, credits])
    expect(jobs).toBe(2)
  })

  it('a quarantine record confirms the key first: none is written for a key revoked since it was read', async () => {
    const ws = await createWorkspace({ db, name: 'confirm key quarantine', apiForm: 'B' })
    const { key, id: keyId } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write'] })
    const state = (await authenticateApiKey({ db, key }))!.asRead
    const quarantine = () =>
      recordQuarantine({ db, workspaceId: ws.id, fileName: 'x.exe', reason: 'type', message: 'no', confirmKey: state })
    await quarantine()
    expect(await db.event.count({ where: { workspaceId: ws.id, type: 'document.quarantined' } })).toBe(1)
    await revokeApiKey({ db, workspaceId: ws.id, keyId })
    await expect(quarantine()).rejects.toBeInstanceOf(PrincipalChanged)
    expect(await db.event.count({ where: { workspaceId: ws.id, type: 'document.quarantined' } })).toBe(1)
  })
})

describe('createJob with a webhook in the workspace', () => {
  it("queues the event's fan-out with the job, and announces it to listening relays", async () => {
    const ws = await createWorkspace({ db, name: 'create-job webhook', apiForm: 'B', credits: 10 })
    await db.webhook.create({
      data: {
        id: `wh_${ws.id}`,
        workspaceId: ws.id,
        name: 'hook',
        url: 'https://receiver.test/hook',
        events: ['*'],
        secret: 'sealed-secret',
      },
    })
    const { jobId } = await submit(ws.id)
    const [event] = (await written(jobId)).events
    expect(event!.fannedOutAt).toBeNull()
    const fanout = await db.outboxMessage.findMany({ where: { queue: FANOUT_QUEUE, jobKey: `fanout.${event!.id}` } })
    expect(fanout).toEqual([expect.objectContaining({ payload: { eventId: event!.id }, dispatchAfter: null })])
  })
})

describe('resolvePipeline', () => {
  it('picks the latest published version, a pinned one, drafts only when allowed, and names what is missing', async () => {
    const ws = await createWorkspace({ db, name: 'resolve test', apiForm: 'B' })
    const other = await createWorkspace({ db, name: 'resolve other', apiForm: 'B' })
    const resolve = (o: { pipelineId?: string; version?: number | null; draft?: boolean; workspaceId?: string }) =>
      resolvePipeline({
        db,
        workspaceId: o.workspaceId ?? ws.id,
        requestedPipelineId: o.pipelineId,
        workspaceDefaultPipelineId: null,
        version: o.version ?? null,
        allowDraftVersion: o.draft ?? false,
      }).catch((e: { code?: string }) => e.code)

    expect(await resolve({})).toMatchObject({ pipelineId: PLATFORM_PARSE_PIPELINE_ID, version: 1 })
    const p = await createPipeline({ db, workspaceId: ws.id, name: 'p', definition: { credits: { per_page: 2 } } })
    expect(await resolve({ pipelineId: p.id })).toBe('PIPELINE_NOT_PUBLISHED')
    expect(await resolve({ pipelineId: p.id, version: 1 })).toBe('PIPELINE_NOT_PUBLISHED')
    expect(await resolve({ pipelineId: p.id, version: 1, draft: true })).toMatchObject({ version: 1 })
    await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, version: 1 })
    await createPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, definition: { credits: { per_page: 3 } } })
    const latest = await resolve({ pipelineId: p.id })
    expect(latest).toMatchObject({ pipelineId: p.id, version: 1 })
    expect((latest as { definition: { credits: { per_page: number } } }).definition.credits.per_page).toBe(2)
    expect(await resolve({ pipelineId: p.id, version: 2, draft: true })).toMatchObject({ version: 2 })
    expect(await resolve({ pipelineId: p.id, version: 3, draft: true })).toBe('VERSION_NOT_FOUND')
    expect(await resolve({ pipelineId: p.id, version: 2 ** 40, draft: true })).toBe('VERSION_NOT_FOUND')
    expect(await resolve({ pipelineId: p.id, workspaceId: other.id })).toBe('PIPELINE_NOT_FOUND')
    expect(await resolve({ pipelineId: 'pl_missing' })).toBe('PIPELINE_NOT_FOUND')
  })
})

describe('authenticateApiKey', () => {
  it('reads with the key the version a submission naming no pipeline runs: bound, else default, else parse', async () => {
    const ws = await createWorkspace({ db, name: 'default run test', apiForm: 'B' })
    const p = await createPipeline({ db, workspaceId: ws.id, name: 'p', definition: { credits: { per_page: 2 } } })
    const { key: plain } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write'] })
    const { key: bound } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write'], pipelineId: p.id })
    const run = async (key: string) => (await authenticateApiKey({ db, key }))!.defaultRun
    expect(await run(plain)).toEqual({ pipelineId: PLATFORM_PARSE_PIPELINE_ID, version: 1 })
    // Bound to a pipeline with no published version: nothing to run; resolvePipeline names why.
    expect(await run(bound)).toBeNull()
    const principal = (await authenticateApiKey({ db, key: bound }))!
    const refused = await resolvePipeline({
      db,
      workspaceId: ws.id,
      boundPipelineId: principal.boundPipelineId,
      workspaceDefaultPipelineId: principal.workspaceDefaultPipelineId,
      defaultRun: principal.defaultRun,
      allowDraftVersion: true,
    }).catch((e: { code?: string }) => e.code)
    expect(refused).toBe('PIPELINE_NOT_PUBLISHED')
    await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, version: 1 })
    await createPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, definition: { credits: { per_page: 3 } } })
    await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: p.id, version: 2 })
    expect(await run(bound)).toEqual({ pipelineId: p.id, version: 2 })
    await db.workspace.update({ where: { id: ws.id }, data: { defaultPipelineId: p.id } })
    expect(await run(plain)).toEqual({ pipelineId: p.id, version: 2 })
    const resolved = await resolvePipeline({
      db,
      workspaceId: ws.id,
      defaultRun: await run(plain),
      allowDraftVersion: false,
    })
    expect(resolved).toMatchObject({ pipelineId: p.id, version: 2, definition: { credits: { per_page: 3 } } })
    expect(JSON.parse(resolved.definitionJson)).toEqual(resolved.definition)
    // Another workspace's pipeline as the default is not this workspace's to run.
    const other = await createWorkspace({ db, name: 'default run other', apiForm: 'B' })
    const { key: otherKey } = await createApiKey({ db, workspaceId: other.id, scopes: ['jobs:write'] })
    await db.workspace.update({ where: { id: other.id }, data: { defaultPipelineId: p.id } })
    expect(await run(otherKey)).toBeNull()
  })

  it('reads the key with its workspace on every call, so a revoked key stops working at once', async () => {
    const ws = await createWorkspace({ db, name: 'auth test', apiForm: 'A' })
    const { key, id } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write', 'jobs:read'] })
    expect(await authenticateApiKey({ db, key })).toEqual({
      keyId: id,
      workspaceId: ws.id,
      apiForm: 'A',
      scopes: ['jobs:write', 'jobs:read'],
      boundPipelineId: null,
      workspaceDefaultPipelineId: null,
      defaultRun: { pipelineId: PLATFORM_PARSE_PIPELINE_ID, version: 1 },
      asRead: {
        keyHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    })
    await db.workspace.update({ where: { id: ws.id }, data: { defaultPipelineId: PLATFORM_PARSE_PIPELINE_ID } })
    expect(await authenticateApiKey({ db, key })).toMatchObject({ workspaceDefaultPipelineId: 'parse' })
    await db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } })
    expect(await authenticateApiKey({ db, key })).toBeNull()
    expect(await authenticateApiKey({ db, key: 'qk_unknown' })).toBeNull()
  })
})

describe('createJob in groups (submission-groups.ts, migration *_submit_jobs_grouped)', () => {
  /** `count` uploads taken in (as the API does before createJob), to be submitted all at once. */
  async function intakes(workspaceId: string, count: number) {
    const pipeline = await resolvePipeline({ db, workspaceId, allowDraftVersion: false })
    const bytes = await textPdf([INVOICE_LINES])
    const files = []
    for (let i = 0; i < count; i++) {
      const tempPath = path.join(dir, `group-${newId('up')}.pdf`)
      await writeFile(tempPath, bytes)
      const file = { tempPath, fileName: `invoice-${i}.pdf`, sizeBytes: bytes.length }
      files.push(await intakeFile({ db, workspaceId, file, definition: pipeline.definition, formTypes: FILE_TYPES }))
    }
    return { pipeline, files }
  }
  /** Submits every upload at once, in order; each submission's job id or its error. */
  const submitAll = (
    workspaceId: string,
    { pipeline, files }: Awaited<ReturnType<typeof intakes>>,
    confirmKeys: (KeyState | undefined)[] = [],
    options: Partial<JobOptions>[] = [],
  ) =>
    Promise.all(
      files.map((file, i) =>
        createJob({
          db,
          blobs,
          workspaceId,
          pipeline,
          files: [file],
          options: { priority: 'standard', executionMode: 'async', environment: 'production', ...options[i] },
          confirmKey: confirmKeys[i],
        }).then(
          (created) => created.jobId,
          (err: unknown) => err,
        ),
      ),
    )
  /** How many statements wrote the workspace's jobs: a statement's stage rows share one `dispatch_after`. */
  const statements = async (jobIds: string[]) =>
    new Set(
      (await db.outboxMessage.findMany({ where: { jobKey: { in: jobIds.map((id) => `${id}.initialization`) } } })).map(
        (o) => o.dispatchAfter?.getTime(),
      ),
    ).size

  it('jobs that arrive while one is written go together in one statement, each reserved against what the jobs before it left; a refused one leaves no row', async () => {
    const ws = await createWorkspace({ db, name: 'grouped submissions', apiForm: 'B', credits: 5 })
    const answers = await submitAll(ws.id, await intakes(ws.id, 8))
    // Five held (the balance), three refused: which ones is the order in which their files were stored.
    const created = answers.filter((a): a is string => typeof a === 'string')
    expect(created).toHaveLength(5)
    for (const refused of answers.filter((a) => typeof a !== 'string')) {
      expect(refused).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { required: 1 } })
    }
    // The first job went alone; the ones stored while it was being written went together.
    expect(await statements(created)).toBeLessThan(created.length)
    for (const jobId of created) {
      const w = await written(jobId)
      expect([w.job?.status, w.files.length, w.stageRuns.length, w.events.length, w.outbox.length]).toEqual([
        'queued',
        1,
        0,
        1,
        1,
      ])
      expect(w.hold).toMatchObject({ amount: 1, status: 'pending' })
    }
    // Nothing of the three refused jobs remains: no job, file, stage run, event, outbox row, hold or ledger entry.
    const everything = await Promise.all([
      db.job.count({ where: { workspaceId: ws.id } }),
      Promise.all(created.map(async (jobId) => (await written(jobId)).files.length)).then((n) =>
        n.reduce((a, b) => a + b),
      ),
      db.event.count({ where: { workspaceId: ws.id } }),
      holdsOf({ workspaceId: ws.id }).then((holds) => holds.length),
      // A reservation is its hold (migration *_reserve_recorded_by_hold): no entry row for any job.
      db.ledgerEntry.count({ where: { workspaceId: ws.id, jobId: { not: null } } }),
    ])
    expect(everything).toEqual([5, 5, 5, 5, 0])
    expect(await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })).toMatchObject({
      creditsAvailable: 0,
      creditsReserved: 5,
    })
    // The refused uploads were not kept in the store.
    const stored = await readdir(path.join(blobDir, ws.id), { recursive: true })
    expect(stored.filter((f) => /-0$/.test(f))).toHaveLength(5)
  })

  it("a key changed since it was read refuses its own jobs in a group, not the others'", async () => {
    const ws = await createWorkspace({ db, name: 'grouped keys', apiForm: 'B', credits: 10 })
    const { key, id: keyId } = await createApiKey({ db, workspaceId: ws.id, scopes: ['jobs:write'] })
    const stale = (await authenticateApiKey({ db, key }))!.asRead
    await revokeApiKey({ db, workspaceId: ws.id, keyId })
    const answers = await submitAll(ws.id, await intakes(ws.id, 5), [undefined, undefined, stale, undefined, stale])
    expect(answers.map((a) => (a instanceof PrincipalChanged ? 'changed' : typeof a))).toEqual([
      'string',
      'string',
      'changed',
      'string',
      'changed',
    ])
    expect(await db.job.count({ where: { workspaceId: ws.id } })).toBe(3)
    expect((await db.workspace.findUniqueOrThrow({ where: { id: ws.id } })).creditsReserved).toBe(3)
  })

  it("a group that fails as a whole is written again one job at a time: one job's error stays its own", async () => {
    const ws = await createWorkspace({ db, name: 'grouped failure', apiForm: 'B', credits: 10 })
    // PostgreSQL's jsonb refuses the escaped NUL: the statement carrying this job fails.
    const unstorable = { metadata: { note: 'a\u0000b' } }
    const answers = await submitAll(ws.id, await intakes(ws.id, 4), [], [{}, {}, unstorable, {}])
    expect(answers.map((a) => typeof a)).toEqual(['string', 'string', 'object', 'string'])
    expect(answers[2]).toMatchObject({ code: '22P05' })
    expect(await db.job.count({ where: { workspaceId: ws.id } })).toBe(3)
  })
})
