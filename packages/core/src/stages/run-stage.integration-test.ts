import { PER_DOCUMENT_STAGES, WORKER_STAGES, type WorkerStage } from '@quire/domain'
import { type ParsePool, parseDocument } from '@quire/extraction'
import { FANOUT_QUEUE, FanoutPayload, fanoutEventIds, jobKeys } from '@quire/queues'
import { openStoreFixture } from '@quire/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { INVOICE_LINES, scannedPdf } from '../../../../tests/fixtures/make-fixtures.ts'
import { cancelJob } from '../jobs/cancel-job.ts'
import { submitTestJob } from '../jobs/submit-job.test-helper.ts'
import { ensurePlatformPipelines } from '../pipelines/pipelines.ts'
import { createWorkspace } from '../workspaces/workspaces.ts'
import { failJob, runStage, runStages } from './run-stage.ts'
import { jobFilesOf } from '../jobs/job-files.ts'
import { loadJobForStage, type StageDeps } from './stage-context.ts'

// runStage on real PostgreSQL, a real blob store in a temporary directory and real PDFs. Crashes and cancellations
// are injected through the deps the stage worker passes (onCommit, the blob store), never by mocking modules.

const fixture = await openStoreFixture({ name: 'run-stage', prepare: ensurePlatformPipelines, ocr: true })
const { db, dir, blobs, ocr } = fixture
const deps: StageDeps = { db, blobs, ocr }
afterAll(fixture.close)

/** Submits a job the way the API does: intake of a real PDF, then createJob (which queues initialization). */
async function submitJob(pages: string[][] = [INVOICE_LINES], opts: { webhook?: boolean; bytes?: Uint8Array } = {}) {
  const ws = await createWorkspace({ db, name: 'run-stage test', apiForm: 'B', credits: 100 })
  // A stored webhook row is all fan-out needs to owe the workspace its events (nothing is delivered here).
  if (opts.webhook !== false) {
    await db.webhook.create({
      data: {
        id: `wh_${ws.id}`,
        workspaceId: ws.id,
        name: 'sink',
        url: 'https://127.0.0.1:9/',
        events: [],
        secret: 'x',
      },
    })
  }
  const { jobId } = await submitTestJob({ db, blobs, dir, workspaceId: ws.id, pages, bytes: opts.bytes })
  return { jobId, workspaceId: ws.id }
}

/** Everything runStage writes for a job, in a stable order, to compare a crashed-and-rerun job with itself. */
async function snapshot(jobId: string) {
  const job = await db.job.findUniqueOrThrow({ where: { id: jobId } })
  const stageRuns = await db.stageRun.findMany({ where: { jobId }, orderBy: { stage: 'asc' } })
  const documents = await db.document.findMany({ where: { jobId }, orderBy: { id: 'asc' } })
  const events = await db.event.findMany({ where: { jobId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })
  const stageKeys = WORKER_STAGES.map((s) => jobKeys.stage(jobId, s))
  const stageMessages = await db.outboxMessage.findMany({
    where: { jobKey: { in: stageKeys } },
    orderBy: { id: 'asc' },
  })
  // The events that fan-out work was queued for (one outbox row may carry several events of one write).
  const eventIds = new Set(events.map((e) => e.id))
  const fanouts = (await db.outboxMessage.findMany({ where: { queue: FANOUT_QUEUE } }))
    .flatMap((m) => fanoutEventIds(FanoutPayload.parse(m.payload)))
    .filter((id) => eventIds.has(id))
    .sort()
  // The ledger's view of holds: a lone submission's pending hold is kept in its job row until it is resolved.
  const [hold] = await db.$queryRaw<{ status: string; amount: number; posted: number | null }[]>`
    SELECT status::text AS status, amount, posted FROM ledger_holds WHERE job_id = ${jobId}`
  const ledger = await db.ledgerEntry.findMany({ where: { jobId }, orderBy: { kind: 'asc' } })
  return { job, stageRuns, documents, events, stageMessages, fanouts, hold, ledger }
}

const eventsOf = <E extends { stage: string | null; transition: string | null }>(
  events: E[],
  stage: string,
  transition: 'entered' | 'exited',
) => events.filter((e) => e.stage === stage && e.transition === transition)

/** Runs every stage in order, as the stage workers would when each outbox message arrives. */
async function runAll(jobId: string, from: WorkerStage = 'initialization') {
  for (const stage of WORKER_STAGES.slice(WORKER_STAGES.indexOf(from))) await runStage(deps, { jobId, stage })
}

/** A crash right after the enter transaction committed, before the stage's work: the worker dies, BullMQ retries. */
const crashAfterEnter = (): StageDeps => ({
  ...deps,
  onCommit: () => {
    throw new Error('worker killed between enter and exit')
  },
})

/** Ids derived from the job id (documents, stage messages) with the job's part blanked, to compare two jobs. */
const anonymise = (value: string | null | undefined, jobId: string) =>
  value?.replaceAll(jobId.replace(/^job_/, ''), 'X')

/** What two runs of the same input must agree on (ids derived from the job id made comparable). */
const shape = (s: Awaited<ReturnType<typeof snapshot>>) => ({
  stageRuns: s.stageRuns.map((r) => [r.stage, r.status, r.credits, r.error]),
  documents: s.documents.map((d) => [anonymise(d.id, s.job.id), d.status, d.type, d.schemaId, d.content, d.data]),
  events: s.events.map((e) => [e.type, e.stage, e.transition, anonymise(e.documentId, s.job.id)]).sort(),
  stageMessages: s.stageMessages.map((m) => anonymise(m.jobKey, s.job.id)),
  fanouts: s.fanouts.length,
  hold: [s.hold?.status, s.hold?.amount, s.hold?.posted],
  ledger: s.ledger.map((e) => [e.kind, e.amount]),
  creditsUsed: s.job.creditsUsed,
})

describe('runStage on real PostgreSQL', () => {
  it('each stage enters and exits: stage run, events, job status, and the next stage queued through the outbox', async () => {
    const { jobId } = await submitJob()
    const initial = await snapshot(jobId)
    expect(initial.job.status).toBe('queued')
    expect(initial.stageMessages.map((m) => m.jobKey)).toEqual([jobKeys.stage(jobId, 'initialization')])

    for (const stage of WORKER_STAGES) {
      const result = await runStage(deps, { jobId, stage })
      const s = await snapshot(jobId)
      const run = s.stageRuns.find((r) => r.stage === stage)
      const entered = eventsOf(s.events, stage, 'entered')
      const exited = eventsOf(s.events, stage, 'exited')

      if (result === 'skipped') {
        // A stage the pipeline turns off is recorded as skipped and fires no events; the job still moves on.
        expect(run).toMatchObject({ status: 'skipped' })
        expect([...entered, ...exited]).toEqual([])
      } else {
        expect(result, stage).toBe('completed')
        expect(run, stage).toMatchObject({ status: 'completed', attempts: 1, error: null })
        expect(run?.completedAt).toBeInstanceOf(Date)
        if (PER_DOCUMENT_STAGES.includes(stage)) {
          // Once per document, each naming its document.
          expect(entered.length, stage).toBeGreaterThan(0)
          const docIds = new Set(s.documents.map((d) => d.id))
          for (const e of [...entered, ...exited]) expect(docIds.has(e.documentId ?? ''), stage).toBe(true)
          expect(exited.map((e) => e.documentId).sort(), stage).toEqual(entered.map((e) => e.documentId).sort())
        } else {
          expect(
            entered.map((e) => e.documentId),
            stage,
          ).toEqual([null])
          expect(
            exited.map((e) => e.documentId),
            stage,
          ).toEqual([null])
        }
        expect(exited[0]?.data, stage).toMatchObject({ job: { stage_now: stage } })
      }

      // The next stage is queued in the exit transaction, under its deterministic id, exactly once.
      const queued = s.stageMessages.map((m) => m.jobKey)
      const upTo = WORKER_STAGES.slice(0, WORKER_STAGES.indexOf(stage) + 2)
      expect(queued, stage).toEqual(upTo.map((st) => jobKeys.stage(jobId, st)))
      // Every event goes to the webhook fan-out through the same outbox.
      expect(s.fanouts.length, stage).toBe(s.events.length)

      if (stage !== 'destination') {
        expect(s.job.status, stage).toBe(stage === 'initialization' ? 'preprocessing' : 'processing')
        expect(s.job.stageNow, stage).toBe(stage)
        expect(s.hold?.status, stage).toBe('pending')
      }
    }

    const done = await snapshot(jobId)
    expect(done.job).toMatchObject({ status: 'completed', stageNow: null })
    expect(done.job.completedAt).toBeInstanceOf(Date)
    expect(done.events.filter((e) => e.type === 'job.started')).toHaveLength(1)
    expect(done.events.filter((e) => e.type === 'job.finished').map((e) => e.data)).toEqual([{ status: 'completed' }])
    expect(done.stageRuns.map((r) => r.stage).sort()).toEqual([...WORKER_STAGES].sort())
    // destination ends the job: the hold is settled for what the stages used, nothing is queued after it.
    const used = done.stageRuns.reduce((n, r) => n + r.credits, 0)
    expect(used).toBeGreaterThan(0)
    expect(done.hold).toMatchObject({ status: 'posted', posted: used })
    expect(done.job.creditsUsed).toBe(used)
    expect(done.ledger.filter((e) => e.kind === 'settle').map((e) => e.amount)).toEqual([used])
    expect(done.stageMessages.at(-1)?.jobKey).toBe(jobKeys.stage(jobId, 'destination'))
  })

  it('a crash between enter and exit: the re-run writes the same rows, no duplicates, and settles once', async () => {
    const crashed = await submitJob()
    const clean = await submitJob()
    await runAll(clean.jobId)

    for (const stage of WORKER_STAGES) {
      await expect(runStage(crashAfterEnter(), { jobId: crashed.jobId, stage })).rejects.toThrow('worker killed')
      const between = await snapshot(crashed.jobId)
      if (stage === 'post_processing') {
        // Disabled in this pipeline: its enter queues nothing (no relay kick), so the first point where the worker
        // can die is after the exit, which recorded it as skipped; the retry finds it done.
        expect(between.stageRuns.find((r) => r.stage === stage)?.status).toBe('skipped')
        expect(await runStage(deps, { jobId: crashed.jobId, stage })).toBe('already_done')
        continue
      }
      // The enter committed: the stage run is running and its entered events exist, but nothing of the exit.
      expect(between.stageRuns.find((r) => r.stage === stage)?.status, stage).toBe('running')
      expect(eventsOf(between.events, stage, 'exited'), stage).toEqual([])
      const next = WORKER_STAGES[WORKER_STAGES.indexOf(stage) + 1]
      if (next) expect(between.stageMessages.map((m) => m.jobKey)).not.toContain(jobKeys.stage(crashed.jobId, next))

      // BullMQ retries the job: the stage runs again from the start and completes.
      expect(await runStage(deps, { jobId: crashed.jobId, stage }), stage).toMatch(/^(completed|skipped)$/)
      // A crash after the exit committed: the retry finds the stage done (after destination: the job finished) and
      // changes nothing.
      const before = await snapshot(crashed.jobId)
      await expect(runStage(crashAfterEnter(), { jobId: crashed.jobId, stage })).resolves.toBe(
        stage === 'destination' ? 'stopped' : 'already_done',
      )
      expect(await snapshot(crashed.jobId), stage).toEqual(before)
    }

    const a = await snapshot(crashed.jobId)
    const b = await snapshot(clean.jobId)
    expect(a.job.status).toBe('completed')
    // Same rows as a job that never crashed: one stage run per stage (the re-run counted as a second attempt),
    // one entered and one exited event per stage and document, one message per stage, one settlement.
    expect(shape(a)).toEqual(shape(b))
    expect(a.events.length).toBe(a.fanouts.length)
    const ran = a.stageRuns.filter((r) => r.stage !== 'source' && r.status !== 'skipped')
    expect(ran.map((r) => [r.stage, r.attempts])).toEqual(ran.map((r) => [r.stage, 2]))
    expect(a.ledger.filter((e) => e.kind === 'settle')).toHaveLength(1)
  })

  it('a job cancelled while a stage works: the exit discards the work and queues nothing', async () => {
    const { jobId, workspaceId } = await submitJob()
    await runStage(deps, { jobId, stage: 'initialization' })
    // The client cancels while parse reads the file.
    const cancelling: StageDeps = {
      ...deps,
      blobs: {
        ...blobs,
        async localPath(key) {
          await cancelJob({ db, workspaceId, jobId })
          return blobs.localPath(key)
        },
      },
    }
    expect(await runStage(cancelling, { jobId, stage: 'parse' })).toBe('stopped')

    const s = await snapshot(jobId)
    expect(s.job.status).toBe('cancelled')
    expect(s.stageRuns.find((r) => r.stage === 'parse')).toMatchObject({ status: 'failed', error: 'cancelled' })
    // Parse's results were not written, no exit event, no next stage.
    expect(s.documents.map((d) => d.content)).toEqual(s.documents.map(() => null))
    expect(eventsOf(s.events, 'parse', 'entered').length).toBeGreaterThan(0)
    expect(eventsOf(s.events, 'parse', 'exited')).toEqual([])
    expect(s.stageMessages.map((m) => m.jobKey)).not.toContain(jobKeys.stage(jobId, 'split_classify'))
    expect(s.hold?.status).toBe('voided')
    expect(s.ledger.map((e) => e.kind)).not.toContain('settle')

    // The message for a stage still in flight finds the job stopped and writes nothing.
    expect(await runStage(deps, { jobId, stage: 'split_classify' })).toBe('stopped')
    expect(await snapshot(jobId)).toEqual(s)
  })

  it('a job that fails or times out ends its documents still under way or parked for review, with its error', async () => {
    for (const parked of [false, true]) {
      const { jobId } = await submitJob()
      for (const stage of ['initialization', 'parse', 'split_classify'] as const) await runStage(deps, { jobId, stage })
      const before = await db.document.findMany({ where: { jobId }, orderBy: { id: 'asc' } })
      const underWay = before.filter((d) => d.status === 'processing')
      expect(underWay.length).toBeGreaterThan(0)
      if (parked) await db.document.update({ where: { id: underWay[0]!.id }, data: { status: 'in_review' } })

      expect(await failJob(deps, { jobId, code: 'sync_timeout', message: 'too long', to: 'timed_out' })).toBe(true)
      const s = await snapshot(jobId)
      expect(s.job.status).toBe('timed_out')
      // Neither reads as work under way, nor as awaiting a decision that can no longer change anything; the rest
      // keep what they were.
      const ended = new Set(underWay.map((d) => d.id))
      for (const d of s.documents) {
        if (ended.has(d.id)) expect([d.status, d.errorCode], d.id).toEqual(['failed', 'sync_timeout'])
        else expect(d.status, d.id).toBe(before.find((b) => b.id === d.id)?.status)
      }
    }
  })

  it('events of a workspace with no webhook are stored as fanned out and never become fan-out work', async () => {
    const { jobId } = await submitJob([INVOICE_LINES], { webhook: false })
    for (const stage of WORKER_STAGES) await runStage(deps, { jobId, stage })
    const s = await snapshot(jobId)
    expect(s.job.status).toBe('completed')
    expect(s.events.length).toBeGreaterThan(0)
    expect(s.events.filter((e) => e.fannedOutAt === null)).toEqual([])
    expect(s.fanouts).toEqual([])
  })

  it('runStages: the stages this process serves run back to back, with no queue message between them', async () => {
    const { jobId } = await submitJob()
    const serves = (s: string) => s !== 'extract'
    // From initialization the chain runs to split_classify; extract is served elsewhere, so it is queued.
    expect(await runStages(deps, { jobId, stage: 'initialization', serves })).toBe('completed')
    let s = await snapshot(jobId)
    expect(s.stageMessages.map((m) => m.jobKey)).toEqual([
      jobKeys.stage(jobId, 'initialization'),
      jobKeys.stage(jobId, 'extract'),
    ])
    expect(s.stageRuns.filter((r) => r.status === 'completed').map((r) => r.stage)).toEqual(
      expect.arrayContaining(['initialization', 'parse', 'split_classify']),
    )
    expect(s.stageRuns.find((r) => r.stage === 'split_classify')?.continuedInline).toBe(false)
    expect(s.stageRuns.find((r) => r.stage === 'parse')?.continuedInline).toBe(true)
    // A duplicate delivery of initialization's message does not run parse again: it was already chained and done.
    expect(await runStages(deps, { jobId, stage: 'initialization', serves })).toBe('already_done')
    expect(await snapshot(jobId)).toEqual(s)
    expect(await runStages(deps, { jobId, stage: 'extract', serves })).toBe('completed')
    s = await snapshot(jobId)
    expect(s.job.status).toBe('completed')
    expect(s.stageMessages).toHaveLength(2)
    expect(s.ledger.filter((e) => e.kind === 'settle')).toHaveLength(1)
  })

  it('runStages: a run of cheap stages commits once, at its end, and writes what stage-by-stage writes', async () => {
    const chained = await submitJob()
    const clean = await submitJob()
    await runAll(clean.jobId)
    let commits = 0
    const counting: StageDeps = { ...deps, onCommit: () => void commits++ }
    expect(await runStages(counting, { jobId: chained.jobId, stage: 'initialization', serves: () => true })).toBe(
      'completed',
    )
    // No stage is costly for a one-page text PDF: the whole run, its start included, is one commit.
    expect(commits).toBe(1)
    const a = await snapshot(chained.jobId)
    const b = await snapshot(clean.jobId)
    expect(a.job.status).toBe('completed')
    // The start committed with the end is still recorded.
    expect(a.job.startedAt).toBeInstanceOf(Date)
    expect(a.job.startedAt!.getTime()).toBeLessThanOrEqual(a.job.completedAt!.getTime())
    // The same rows, except the queue messages the chain did without.
    expect({ ...shape(a), stageMessages: null }).toEqual({ ...shape(b), stageMessages: null })
    expect(a.stageMessages.map((m) => m.jobKey)).toEqual([jobKeys.stage(chained.jobId, 'initialization')])
    // Every stage ran once and led on to the next, except the last.
    expect(
      a.stageRuns.filter((r) => r.stage !== 'source').map((r) => [r.stage, r.attempts, r.continuedInline]),
    ).toEqual(
      expect.arrayContaining(
        WORKER_STAGES.map((st) => [st, 1, st !== 'destination']).filter(([st]) => st !== 'post_processing'),
      ),
    )
    // Events carry the moments they happened: no event of a stage is later than any event of the stage after it.
    const staged = a.events.filter((e) => e.stage && e.stage !== 'source')
    const at = (st: string, pick: typeof Math.min) =>
      pick(...staged.filter((e) => e.stage === st).map((e) => e.createdAt.getTime()))
    const ran = WORKER_STAGES.filter((st) => staged.some((e) => e.stage === st))
    expect(ran.length).toBeGreaterThan(4)
    for (let i = 1; i < ran.length; i++) expect(at(ran[i - 1]!, Math.max)).toBeLessThanOrEqual(at(ran[i]!, Math.min))
  })

  it('runStages: a crash inside the chain resumes, on the first stage’s redelivery, from the first stage not done', async () => {
    const { jobId } = await submitJob()
    const all = () => true
    let commits = 0
    // Every stage is a checkpoint (checkpointMs 0); the process dies after the fourth commit: initialization's start,
    // then each exit with the next stage's start, so split_classify is done and extract has started.
    const dying: StageDeps = {
      ...deps,
      checkpointMs: 0,
      onCommit: () => {
        if (++commits === 4) throw new Error('worker killed mid-chain')
      },
    }
    await expect(runStages(dying, { jobId, stage: 'initialization', serves: all })).rejects.toThrow('mid-chain')
    const between = await snapshot(jobId)
    expect(between.job.status).toBe('processing')
    expect(between.stageRuns.find((r) => r.stage === 'split_classify')).toMatchObject({
      status: 'completed',
      continuedInline: true,
    })
    expect(between.stageRuns.find((r) => r.stage === 'extract')?.status).toBe('running')
    expect(between.stageMessages.map((m) => m.jobKey)).toEqual([jobKeys.stage(jobId, 'initialization')])
    // BullMQ hands the initialization job out again: the stages done are passed over, the chain goes on to the end.
    expect(await runStages(deps, { jobId, stage: 'initialization', serves: all })).toBe('completed')
    const done = await snapshot(jobId)
    expect(done.job.status).toBe('completed')
    expect(done.stageRuns.find((r) => r.stage === 'extract')?.attempts).toBe(2)
    expect(done.ledger.filter((e) => e.kind === 'settle')).toHaveLength(1)
    const exited = done.events.filter((e) => e.transition === 'exited')
    expect(new Set(exited.map((e) => `${e.stage}|${e.documentId}`)).size).toBe(exited.length)
  })

  it('runStages: a stage that throws inside a run keeps the stages before it; the retry resumes there', async () => {
    const { jobId } = await submitJob()
    let reads = 0
    // initialization reads the file first; parse's read (the second) fails once.
    const flaky: StageDeps = {
      ...deps,
      blobs: {
        ...blobs,
        localPath: (key) => {
          if (++reads === 2) return Promise.reject(new Error('disk went away'))
          return blobs.localPath(key)
        },
      },
    }
    await expect(runStages(flaky, { jobId, stage: 'initialization', serves: () => true })).rejects.toThrow('went away')
    const between = await snapshot(jobId)
    expect(between.stageRuns.find((r) => r.stage === 'initialization')).toMatchObject({
      status: 'completed',
      continuedInline: true,
    })
    // parse shows as started (its entered events are out), not done.
    expect(between.stageRuns.find((r) => r.stage === 'parse')).toMatchObject({ status: 'running', attempts: 1 })
    expect(eventsOf(between.events, 'parse', 'entered').length).toBeGreaterThan(0)
    expect(eventsOf(between.events, 'parse', 'exited')).toEqual([])
    expect(between.documents.map((d) => d.status)).toEqual(['processing'])

    expect(await runStages(flaky, { jobId, stage: 'initialization', serves: () => true })).toBe('completed')
    const done = await snapshot(jobId)
    expect(done.job.status).toBe('completed')
    expect(done.stageRuns.find((r) => r.stage === 'parse')).toMatchObject({ status: 'completed', attempts: 2 })
    expect(eventsOf(done.events, 'parse', 'entered')).toHaveLength(1)
    expect(done.ledger.filter((e) => e.kind === 'settle')).toHaveLength(1)
  })

  it('runStages: a job cancelled while a run works discards everything since the last commit', async () => {
    const { jobId, workspaceId } = await submitJob()
    let reads = 0
    const cancelling: StageDeps = {
      ...deps,
      blobs: {
        ...blobs,
        async localPath(key) {
          if (++reads === 2) await cancelJob({ db, workspaceId, jobId })
          return blobs.localPath(key)
        },
      },
    }
    expect(await runStages(cancelling, { jobId, stage: 'initialization', serves: () => true })).toBe('stopped')
    const s = await snapshot(jobId)
    expect(s.job.status).toBe('cancelled')
    // Nothing of the run was committed (a quick run commits once, at its end): no documents, stage runs or exits.
    expect(s.documents).toEqual([])
    expect(s.stageRuns).toEqual([])
    expect(s.events.filter((e) => e.transition === 'exited' && e.stage !== 'source')).toEqual([])
    expect(s.hold?.status).toBe('voided')
  })

  it('loadJobForStage reads, in one statement, what Prisma reads: every column, the same types and order', async () => {
    const { jobId } = await submitJob([INVOICE_LINES, ['Second page']])
    await runStages(deps, { jobId, stage: 'initialization', serves: () => true })
    const loaded = await loadJobForStage(db, jobId)
    const prisma = await db.job.findUniqueOrThrow({
      where: { id: jobId },
      include: {
        files: { orderBy: { position: 'asc' } },
        documents: { orderBy: { id: 'asc' } },
        stageRuns: true,
      },
    })
    const byStage = <R extends { stage: string }>(runs: R[]) => [...runs].sort((x, y) => x.stage.localeCompare(y.stage))
    expect(loaded?.documents.length).toBeGreaterThan(0)
    // Its files wherever they are kept (a lone submission's one file is in the job row), as the stages read them.
    const files = jobFilesOf(prisma).map(
      ({ position, fileName, fileType, mimeType, sizeBytes, pageCount, blobKey }) => ({
        position,
        fileName,
        fileType,
        mimeType,
        sizeBytes,
        pageCount,
        blobKey,
      }),
    )
    expect(files).toHaveLength(1)
    expect({ ...loaded, stageRuns: byStage(loaded!.stageRuns) }).toEqual({
      ...prisma,
      files,
      stageRuns: byStage(prisma.stageRuns),
    })
    expect(await loadJobForStage(db, 'job_missing')).toBeNull()
  })

  it('with parse processes, a small text PDF is read in-process with the same result; anything else goes to them', async () => {
    const calls: string[] = []
    const pool: ParsePool = {
      async parse(p, type) {
        calls.push(type)
        return { ...(await parseDocument(p, type, { ocr })), cpuMs: 1, rssBytes: 0 }
      },
      async warm() {
        return []
      },
      async close() {},
    }
    const clean = await submitJob()
    await runAll(clean.jobId)
    const inline = await submitJob()
    await runStages({ ...deps, parsePool: pool }, { jobId: inline.jobId, stage: 'initialization', serves: () => true })
    expect(calls).toEqual([])
    expect({ ...shape(await snapshot(inline.jobId)), stageMessages: null }).toEqual({
      ...shape(await snapshot(clean.jobId)),
      stageMessages: null,
    })
    // Inline parsing turned off: the pool parses it.
    const pooled = await submitJob()
    await runStages(
      { ...deps, parsePool: pool, parseInlineMaxBytes: 0 },
      { jobId: pooled.jobId, stage: 'initialization', serves: () => true },
    )
    expect(calls).toEqual(['pdf'])
    expect(shape(await snapshot(pooled.jobId)).documents).toEqual(shape(await snapshot(clean.jobId)).documents)
    // A scanned page has no text layer: it goes to the pool for OCR.
    const scanned = await submitJob([], { bytes: await scannedPdf([INVOICE_LINES]) })
    await runStages({ ...deps, parsePool: pool }, { jobId: scanned.jobId, stage: 'initialization', serves: () => true })
    expect(calls).toEqual(['pdf', 'pdf'])
    const s = await snapshot(scanned.jobId)
    expect(s.job.status).toBe('completed')
    expect(s.documents[0]?.content).toMatchObject({ ocr_pages: [1] })
  }, 120_000)

  it('a stage already recorded as done is not run again', async () => {
    const { jobId } = await submitJob()
    await runStage(deps, { jobId, stage: 'initialization' })
    await runStage(deps, { jobId, stage: 'parse' })
    const before = await snapshot(jobId)
    // A duplicate delivery of the parse message (e.g. a stalled BullMQ job handed out twice).
    const reading: string[] = []
    const watching: StageDeps = {
      ...deps,
      blobs: {
        ...blobs,
        localPath: (key) => {
          reading.push(key)
          return blobs.localPath(key)
        },
      },
    }
    expect(await runStage(watching, { jobId, stage: 'parse' })).toBe('already_done')
    expect(await runStage(watching, { jobId, stage: 'initialization' })).toBe('already_done')
    expect(reading).toEqual([])
    expect(await snapshot(jobId)).toEqual(before)
  })
})
