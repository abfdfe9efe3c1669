import {
  canTransition,
  creditsForPages,
  DomainError,
  isFinalStatus,
  isUndeliveredDocument,
  newId,
  nextStage,
  PARKED_DOCUMENT_STATUSES,
  PER_DOCUMENT_STAGES,
  PipelineDefinition,
  WORKER_STAGES,
  type JobStatus,
  type WorkerStage,
} from '@quire/domain'
import { directTransaction, type RawSql, type StageRun, type Tx } from '@quire/db'
import { settleCredits, voidCredits } from '@quire/ledger'
import { outbox, outboxWriteCount, type Priority } from '@quire/queues'
import { recordEvents, type EventInput } from '../events/record-event.ts'
import { leaveErrorGroupInTx } from '../jobs/error-groups.ts'
import { endOpenDocuments, lockJob, transitionJob } from '../jobs/job-transitions.ts'
import { destinationStage } from './destination.stage.ts'
import { extractStage } from './extract.stage.ts'
import { initializationStage } from './initialization.stage.ts'
import { parseStage } from './parse.stage.ts'
import { postProcessingStage } from './post-processing.stage.ts'
import { splitClassifyStage } from './split-classify.stage.ts'
import {
  type DocumentNote,
  leafDocuments,
  type LoadedJob,
  loadJobForStage,
  type LoadedDocument,
  type StageDeps,
  type StageExecutor,
  type StageOutput,
} from './stage-context.ts'
import { validateStage } from './validate.stage.ts'
import { clientMessage } from './client-message.ts'
import { rerunAfterReview } from './rerun-after-review.ts'
import { applyDocumentWrites, changedSinceCommit, type JobChanges, writeCheckpoint } from './stage-writes.ts'

const EXECUTORS: Record<WorkerStage, StageExecutor> = {
  initialization: initializationStage,
  parse: parseStage,
  split_classify: splitClassifyStage,
  extract: extractStage,
  validate: validateStage,
  post_processing: postProcessingStage,
  destination: destinationStage,
}

/**
 * The CPU this process uses while stages run, split among them: while n stages run at once (worker concurrency,
 * several queues, all interleaved on one event loop) each is charged 1/n of it, so the charges add up to what the
 * process really used. A bare process.cpuUsage() delta around each stage would charge every stage for all the others
 * running beside it. (Per-thread CPU, process.threadCpuUsage, needs Node >= 23.9 and would still charge one stage for
 * the others sharing the loop.) The parse processes are not in it: they report their own CPU per request.
 */
const running = new Map<symbol, number>()
let cpuSeenMs = 0
function chargeRunningStages() {
  const u = process.cpuUsage()
  const now = (u.user + u.system) / 1000
  if (running.size > 0) {
    const share = (now - cpuSeenMs) / running.size
    for (const [k, ms] of running) running.set(k, ms + share)
  }
  cpuSeenMs = now
}
async function withStageCpu<T>(fn: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  chargeRunningStages()
  const token = Symbol('stage')
  running.set(token, 0)
  try {
    const value = await fn()
    chargeRunningStages()
    return { value, cpuMs: Math.round(running.get(token) ?? 0) }
  } finally {
    running.delete(token)
  }
}

/** The job left the running states (cancelled, failed elsewhere): the stages' work is discarded. */
class JobNoLongerRunning extends Error {}

export type StageRunResult = 'completed' | 'skipped' | 'already_done' | 'stopped'

function stageEvents(
  job: { id: string; workspaceId: string },
  stage: WorkerStage,
  transition: 'entered' | 'exited',
  docs: LoadedDocument[] | null,
  snapshot: Record<string, unknown>,
  at: Date,
): EventInput[] {
  const base = {
    workspaceId: job.workspaceId,
    jobId: job.id,
    stage,
    transition,
    type: `stage.${transition}` as const,
    at,
  }
  const data = transition === 'exited' ? { job: snapshot } : {}
  if (docs === null) return [{ ...base, data }]
  return docs.map((d) => ({ ...base, documentId: d.id, data }))
}

/** A stage's run this long or longer is committed as soon as it ends (a crash would otherwise redo it). */
const DEFAULT_CHECKPOINT_MS = 1_000

/**
 * Runs one stage of one job and queues the next through the outbox. Idempotent: a stage already recorded as done
 * is not run again, and a re-run after a crash rewrites the same rows (deterministic document ids, upserts).
 */
export async function runStage(deps: StageDeps, opts: { jobId: string; stage: WorkerStage }): Promise<StageRunResult> {
  return runStages(deps, { ...opts, serves: () => false, resume: false })
}

/**
 * Runs a stage and then, in this process, every following stage `serves` says this process runs, without a queue
 * hop between them. A stage whose successor this process does not serve queues it through the outbox.
 *
 * Durable checkpoints: the first stage's start commits on its own (the job shows as started, a crash leaves the
 * stage `running`), unless no stage ahead is costly for the job (then it commits with the rest). After that, the stages run on the job as held in memory, each seeing what the ones before it
 * wrote, and their writes (documents, stage runs, events, the job's status) commit together at the next checkpoint:
 * where the run ends (next stage queued, review, finish, failure), around a stage that is `costly` for this job,
 * after a stage that took `checkpointMs` or longer, and before a stage's error is handed back. A checkpoint that
 * goes on inline records `continuedInline` on the last stage done and commits the next stage's start with it.
 *
 * Crash safety: the chain runs inside the first stage's queue job. If the process dies, that job is handed out
 * again; the stages committed are `already_done` (those that `continuedInline` lead on), and the chain resumes from
 * the first stage not committed. Uncommitted work is simply done again: stages are idempotent.
 */
export async function runStages(
  deps: StageDeps,
  opts: {
    jobId: string
    stage: WorkerStage
    serves: (stage: WorkerStage) => boolean
    onStage?: (s: WorkerStage) => void
    /** Follow `continuedInline` past stages already done (false for a single runStage). */
    resume?: boolean
  },
): Promise<StageRunResult> {
  const job = await loadJobForStage(deps.db, opts.jobId)
  if (!job || job.expiredAt || isFinalStatus(job.status as JobStatus)) return 'stopped'
  let stage = opts.stage
  for (;;) {
    const run = job.stageRuns.find((r) => r.stage === stage)
    if (!run || (run.status !== 'completed' && run.status !== 'skipped')) break
    // Only a stage whose checkpoint chose to go on inline leads on: otherwise the next stage has its own queue job,
    // and running it here too would run it twice at once.
    const next = run.continuedInline && opts.resume !== false ? nextStage(stage) : null
    if (!next) return 'already_done'
    stage = next
  }

  const definition = PipelineDefinition.parse(job.definition)
  const checkpointMs = deps.checkpointMs ?? DEFAULT_CHECKPOINT_MS
  const run = new StageRunState(job, definition)
  // A chain where no stage ahead is costly for this job runs in milliseconds: its start commits with its end (a client
  // sees `queued`, then the outcome; the events still carry their moments). Otherwise the start commits on its own,
  // so the job shows as started while the work goes on.
  const quick =
    opts.resume !== false &&
    checkpointMs > 0 &&
    WORKER_STAGES.slice(WORKER_STAGES.indexOf(stage)).every((s) => !EXECUTORS[s].costly?.(job))
  if (quick) run.enter(stage, new Date())
  else if (!(await commitRun(deps, run, { enter: stage }))) return 'stopped'

  for (;;) {
    opts.onStage?.(stage)
    const executor = EXECUTORS[stage]
    const enabled = run.enabled(stage)
    let output: StageOutput
    let ownCpuMs: number
    try {
      // CPU the stage used: its share of this process's (withStageCpu) plus what it reports from elsewhere (the
      // parse processes, with the programs they run). Form A shows the sum as machine_seconds.
      ;({ value: output, cpuMs: ownCpuMs } = await withStageCpu(
        async (): Promise<StageOutput> => (enabled ? await executor.run({ deps, job: run.job, definition }) : {}),
      ))
    } catch (err) {
      // What the stages before this one did is kept, and this one shows as running (its retry counts an attempt).
      if (run.hasWrites()) await commitRun(deps, run, {})
      throw err
    }
    const { ms, nothingLeft } = run.exit(stage, output, ownCpuMs + (output.cpuMs ?? 0), new Date())
    const result: StageRunResult = enabled ? 'completed' : 'skipped'
    const next = nextStage(stage)
    let end: RunEnd
    if (nothingLeft) end = { fail: stage }
    else if (output.holdForReview) end = { review: stage }
    else if (!next) end = { finish: true }
    else if (!opts.serves(next)) end = { queue: next }
    else {
      const costly = executor.costly?.(run.job) || EXECUTORS[next].costly?.(run.job) || ms >= checkpointMs
      run.goOnInline(stage)
      if (costly && !(await commitRun(deps, run, { enter: next }))) return 'stopped'
      if (!costly) run.enter(next, new Date())
      stage = next
      continue
    }
    return (await commitRun(deps, run, end)) ? result : 'stopped'
  }
}

/**
 * How a commit ends the run of stages: with the next stage entered (the run goes on), queued for another process,
 * the job paused for review, finished, or failed because a stage left no document.
 */
type RunEnd = {
  enter?: WorkerStage
  queue?: WorkerStage
  review?: WorkerStage
  finish?: true
  fail?: WorkerStage
}

/**
 * Commits what the run holds: in one transaction, with the job's row locked and still running. Returns false (and
 * discards the work) when the job stopped meanwhile (cancelled, timed out). Every statement of it is raw SQL sent
 * without Prisma (directTransaction): it is the one transaction of every run of stages, and Prisma's interactive
 * transaction cost more CPU than its statements.
 */
async function commitRun(deps: StageDeps, run: StageRunState, end: RunEnd): Promise<boolean> {
  const writesBefore = outboxWriteCount()
  try {
    await directTransaction(deps.db, async (tx) => {
      const [locked] = await tx.$queryRaw<{ status: JobStatus; error_group_id: string | null }[]>`
        SELECT status::text AS status, error_group_id FROM jobs WHERE id = ${run.job.id} FOR UPDATE`
      if (!locked || isFinalStatus(locked.status)) throw new JobNoLongerRunning()
      if (end.enter) run.enter(end.enter, new Date())
      await run.write(tx, locked, end)
    })
  } catch (err) {
    if (err instanceof JobNoLongerRunning) return false
    throw err
  }
  run.committed()
  // The relay is kicked only when the transaction queued something (an empty pass still costs three statements).
  if (outboxWriteCount() !== writesBefore) deps.onCommit?.()
  return true
}

/**
 * The job as the stages of one run see it, with everything they did since the last commit: the documents they
 * touched, their history lines, stage runs, events in the order they happened, and the job's own changes.
 */
class StageRunState {
  private touched = new Set<string>()
  private notes: (DocumentNote & { at: Date })[] = []
  private lastNoteMs = 0
  private runs = new Map<string, StageRun>()
  private events: EventInput[] = []
  /** Statuses the job passes through in memory, from the status it had at the last commit. */
  private statuses: JobStatus[] = []
  private jobChanges: JobChanges = {}
  /** Each stage's documents as it entered (its exit events name the same ones, less those it failed). */
  private enteredDocs = new Map<WorkerStage, LoadedDocument[] | null>()
  private status: JobStatus
  /** The first document the last stage failed on: the job's error when no document is left. */
  private lastFailure: { code: string; message: string } | null = null
  /** Stages that ended since the last commit (a retried stage's old run still has its earlier end time). */
  private stagesExited = 0
  /**
   * The documents parked in the database as of the last commit (or the load), with the status and data they have
   * there: a reviewer may decide them while the stages run on what is held here (see adoptDecisions).
   */
  private parkedAtCommit = new Map<string, { status: string; data: unknown }>()
  /** Documents a reviewer decided while this run held them parked, to be delivered: the stages ran without them. */
  private decidedWhileRunning = new Set<string>()

  constructor(
    readonly job: LoadedJob,
    readonly definition: PipelineDefinition,
  ) {
    this.status = job.status as JobStatus
    this.rememberParked()
  }

  private rememberParked() {
    this.parkedAtCommit = new Map(
      this.job.documents
        .filter((d) => PARKED_DOCUMENT_STATUSES.includes(d.status))
        .map((d) => [d.id, { status: d.status, data: d.data }]),
    )
  }

  /**
   * A reviewer's decision is taken while the job runs (core reviewDocument), under the job's row lock, which this
   * commit now holds: a document parked at the last commit whose row differs from what was committed was decided
   * meanwhile. Its row is the reviewer's: it is taken as it is in the database and not written over (the stages ran
   * on it as parked). The job's later path reads the decision: nothing parked any more means no `partial`.
   */
  private async adoptDecisions(tx: RawSql) {
    if (this.parkedAtCommit.size === 0) return
    for (const row of await changedSinceCommit(tx, this.parkedAtCommit)) {
      const doc = this.job.documents.find((d) => d.id === row.id)
      if (!doc) continue
      Object.assign(doc, { status: row.status, data: row.data })
      this.touched.delete(row.id)
      if (!isUndeliveredDocument(row.status)) this.decidedWhileRunning.add(row.id)
    }
  }

  enabled(stage: WorkerStage): boolean {
    return EXECUTORS[stage].enabled?.(this.definition) ?? true
  }

  hasWrites(): boolean {
    return this.runs.size > 0 || this.events.length > 0 || this.touched.size > 0 || this.statuses.length > 0
  }

  private moveTo(to: JobStatus) {
    if (this.status === to) return
    if (!canTransition(this.status, to)) {
      throw new DomainError('JOB_NOT_CANCELLABLE', `job cannot move from ${this.status} to ${to}`)
    }
    this.status = to
    this.statuses.push(to)
  }

  private putRun(run: StageRun) {
    this.runs.set(run.stage, run)
    const i = this.job.stageRuns.findIndex((r) => r.stage === run.stage)
    if (i === -1) this.job.stageRuns.push(run)
    else this.job.stageRuns[i] = run
  }

  enter(stage: WorkerStage, at: Date) {
    const job = this.job
    this.moveTo(stage === 'initialization' ? 'preprocessing' : 'processing')
    job.stageNow = stage
    job.startedAt ??= at
    this.jobChanges = { stageNow: stage, startedAt: job.startedAt }
    const perDocument = PER_DOCUMENT_STAGES.includes(stage)
    const docs = perDocument ? EXECUTORS[stage].documentsFor(job) : null
    this.enteredDocs.set(stage, docs)
    if (!this.enabled(stage)) return
    const existing = job.stageRuns.find((r) => r.stage === stage)
    if (existing) {
      // A retry: one more attempt, no second set of entered events.
      this.putRun({ ...existing, attempts: existing.attempts + 1, status: 'running' })
      return
    }
    this.putRun({
      id: newId('run'),
      jobId: job.id,
      stage,
      status: 'running',
      attempts: 1,
      credits: 0,
      error: null,
      startedAt: at,
      completedAt: null,
      ms: null,
      cpuMs: null,
      continuedInline: false,
    })
    const events = stageEvents(job, stage, 'entered', docs, {}, at)
    if (stage === 'initialization')
      events.unshift({ workspaceId: job.workspaceId, jobId: job.id, type: 'job.started', at })
    this.events.push(...events)
  }

  /**
   * A line of a document's history. A document's history reads in time order, so lines of stages a worker chains
   * within the same millisecond get the next millisecond each: the order they happened in stays the order shown.
   */
  private note(n: DocumentNote & { at: Date }) {
    const ms = Math.max(n.at.getTime(), this.lastNoteMs + 1)
    this.lastNoteMs = ms
    this.notes.push({ ...n, at: ms === n.at.getTime() ? n.at : new Date(ms) })
  }

  /** Applies a stage's output to the job; says whether any document is left to go on with. */
  exit(stage: WorkerStage, output: StageOutput, cpuMs: number, at: Date): { ms: number; nothingLeft: boolean } {
    const job = this.job
    const enabled = this.enabled(stage)
    this.stagesExited++
    applyDocumentWrites(job, output.documents ?? [], at, this.touched)
    // A document's own history (DESIGN: a document carries `events`) starts with the stage that made it, before
    // anything that stage then says of it (a split child failed in the same stage reads created, then failed).
    for (const w of output.documents ?? []) {
      if ('create' in w)
        this.note({
          documentId: w.create.id,
          type: 'created',
          data: { stage, ...(w.create.parentId ? { parent_id: w.create.parentId } : {}) },
          at,
        })
    }
    const failed = output.failedDocuments ?? []
    for (const f of failed) {
      const message = clientMessage(f.message, stage)
      applyDocumentWrites(
        job,
        [{ update: f.documentId, set: { status: 'failed', errorCode: f.code, errorMessage: message } }],
        at,
        this.touched,
      )
      this.note({ documentId: f.documentId, type: 'failed', data: { stage, code: f.code, message }, at })
    }
    for (const n of output.notes ?? []) this.note({ ...n, at })
    this.lastFailure = failed[0] ?? null
    const live = job.documents.filter((d) => d.status !== 'failed' && d.status !== 'split').length
    const nothingLeft = job.documents.length > 0 && live === 0
    const existing = job.stageRuns.find((r) => r.stage === stage)
    const startedAt = existing?.startedAt ?? at
    const ms = at.getTime() - startedAt.getTime()
    this.putRun({
      id: existing?.id ?? newId('run'),
      jobId: job.id,
      stage,
      attempts: existing?.attempts ?? 1,
      startedAt,
      continuedInline: false,
      status: !enabled ? 'skipped' : nothingLeft ? 'failed' : 'completed',
      completedAt: at,
      ms,
      credits: output.credits ?? 0,
      cpuMs: Math.round(cpuMs),
      error: failed.length
        ? failed
            .map((f) => clientMessage(f.message, stage))
            .join('; ')
            .slice(0, 2000)
        : null,
    })
    if (nothingLeft || !enabled) return { ms, nothingLeft }
    const failedIds = new Set(failed.map((f) => f.documentId))
    const exitedDocs = this.enteredDocs.get(stage)?.filter((d) => !failedIds.has(d.id)) ?? null
    // ... and records each per-document stage it came through, with what the stage decided about it.
    const docsNow = exitedDocs?.length ? new Map(job.documents.map((x) => [x.id, x])) : null
    for (const d of exitedDocs ?? []) {
      const now = docsNow?.get(d.id)
      this.note({
        documentId: d.id,
        type: 'stage_completed',
        data: {
          stage,
          status: now?.status ?? d.status,
          ...(stage === 'split_classify' ? { type: now?.type ?? null, schema_id: now?.schemaId ?? null } : {}),
        },
        at,
      })
    }
    const snapshot = { status: this.status, stage_now: stage }
    this.events.push(
      ...stageEvents(job, stage, 'exited', exitedDocs, snapshot, at),
      ...(output.events ?? []).map((e) => ({ ...e, at })),
    )
    return { ms, nothingLeft }
  }

  /** The stage's successor runs here next: no queue message will exist for it. */
  goOnInline(stage: WorkerStage) {
    const run = this.runs.get(stage)
    if (run) this.putRun({ ...run, continuedInline: true })
    else {
      // A skipped stage has no run until its exit; exit always records one, so this is never reached.
      throw new Error(`stage ${stage} has no run to continue from`)
    }
  }

  /** Writes everything held, then what `end` decides, under the job's row lock. */
  async write(tx: RawSql, locked: { status: JobStatus; error_group_id: string | null }, end: RunEnd) {
    const job = this.job
    await this.adoptDecisions(tx)
    // The path the job took in memory must be a path from the status it has now.
    let from = locked.status
    for (const to of this.statuses) {
      if (from !== to && !canTransition(from, to)) {
        throw new DomainError('JOB_NOT_CANCELLABLE', `job cannot move from ${from} to ${to}`)
      }
      from = to
    }
    const stageDone = this.stagesExited > 0
    // A stage done (or the job failing) takes the job out of the error group a blocked stage put it in.
    if (locked.error_group_id && (stageDone || end.fail)) {
      await leaveErrorGroupInTx(tx, { id: job.id, workspaceId: job.workspaceId, errorGroupId: locked.error_group_id })
    }
    const now = new Date()
    let to = from
    // The start a quick chain commits with its end is kept whatever the end writes.
    let set: JobChanges = { ...this.jobChanges }
    const finalEvents: EventInput[] = []
    let rerun = false
    if (end.queue) {
      await outbox.stage(
        tx,
        { stage: end.queue, jobId: job.id },
        { priority: (job.priority as Priority) ?? 'standard' },
      )
    } else if (end.review) {
      // Resumed by core reviewDocument once every parked document is decided; nothing is queued meanwhile.
      to = 'awaiting_review'
      set = { ...set, stageNow: end.review }
    } else if (end.finish && holdsDocuments(job, this.definition)) {
      // review.hold `document`: what passed went through; the job waits `partial` for the parked documents, and
      // core reviewDocument runs post_processing and destination again once the last of them is decided.
      to = 'partial'
      set = { ...set, stageNow: null }
    } else if (end.finish && job.waitForReview && this.decidedWhileRunning.size > 0) {
      // Documents decided while the stages ran (held parked here) missed post_processing and destination: the job
      // runs them again, as a `partial` job resuming does, and finishes (settles once) after them.
      rerun = true
      set = { ...set, stageNow: 'post_processing' }
    } else if (end.finish) {
      const finished = await settleJob(tx, job, this.definition)
      to = finished.status
      set = { ...set, ...finished.set, stageNow: null, completedAt: now }
      finalEvents.push({ workspaceId: job.workspaceId, jobId: job.id, type: 'job.finished', data: { status: to } })
    } else if (end.fail) {
      const first = this.lastFailure
      to = 'failed'
      set = {
        ...set,
        failedStage: end.fail,
        errorCode: first?.code ?? 'stage_failed',
        errorMessage: first ? clientMessage(first.message, end.fail) : 'no document left',
        completedAt: now,
        stageNow: null,
        creditsUsed: 0,
      }
      await voidCredits(tx, { jobId: job.id })
      finalEvents.push({
        workspaceId: job.workspaceId,
        jobId: job.id,
        type: 'job.finished',
        data: { status: 'failed' },
      })
    }
    if (to !== from && !canTransition(from, to)) {
      throw new DomainError('JOB_NOT_CANCELLABLE', `job cannot move from ${from} to ${to}`)
    }
    // One write for the whole path (e.g. preprocessing -> processing -> completed), each step checked above; with
    // the documents, their notes and the stage runs in the same statement.
    await writeCheckpoint(tx, {
      documents: job.documents.filter((d) => this.touched.has(d.id)),
      notes: this.notes,
      runs: [...this.runs.values()],
      job: { id: job.id, status: locked.status, set: to !== locked.status ? { ...set, status: to } : set },
    })
    await recordEvents(tx, [...this.events, ...finalEvents])
    if (rerun) await rerunAfterReview(tx, { jobId: job.id, priority: job.priority })
    this.status = to
  }

  /** Everything held is now in the database. */
  committed() {
    this.touched.clear()
    this.notes = []
    this.runs.clear()
    this.events = []
    this.statuses = []
    this.jobChanges = {}
    this.stagesExited = 0
    this.rememberParked()
  }
}

/** A job told to wait for review whose parked documents hold only themselves (`review.hold: document`). */
function holdsDocuments(job: LoadedJob, definition: PipelineDefinition): boolean {
  return (
    job.waitForReview &&
    definition.review.hold === 'document' &&
    job.documents.some((d) => PARKED_DOCUMENT_STATUSES.includes(d.status))
  )
}

/**
 * The job's last stage is done: settle the hold to what was processed (the pages of the documents that did not
 * fail, never more than the stages charged) and finish as `completed`, or `completed_with_errors` when a document
 * failed on the way (DESIGN: one document of several failing does not sink the others).
 */
async function settleJob(
  tx: RawSql,
  job: LoadedJob,
  definition: PipelineDefinition,
): Promise<{ status: JobStatus; set: JobChanges }> {
  const charged = job.stageRuns.reduce((n, r) => n + r.credits, 0)
  const livePages = leafDocuments(job).reduce((n, d) => n + d.pages.length, 0)
  const used = Math.min(charged, creditsForPages(livePages, definition.credits.per_page))
  const settled = await settleCredits(tx, { jobId: job.id, used })
  const firstFailure = job.stageRuns
    .filter((r) => r.error)
    .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime())[0]
  const firstFailedDocument = job.documents
    .filter((d) => d.status === 'failed')
    .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())[0]
  return {
    status: firstFailure ? 'completed_with_errors' : 'completed',
    set: {
      creditsUsed: settled?.posted ?? used,
      ...(firstFailure
        ? {
            failedStage: firstFailure.stage,
            errorCode: firstFailedDocument?.errorCode ?? 'document_failed',
            errorMessage: firstFailedDocument?.errorMessage ?? firstFailure.error,
          }
        : {}),
    },
  }
}

/**
 * failJob inside the caller's transaction (retention fails jobs in its own sweep). Without `stage`, the job fails at
 * the stage it is in, read under the job's lock.
 */
export async function failJobInTx(
  tx: Tx,
  opts: { jobId: string; stage?: string; code: string; message: string; to?: JobStatus },
) {
  const status = await lockJob(tx, opts.jobId)
  if (!status || isFinalStatus(status)) return false
  const job = await tx.job.findUniqueOrThrow({ where: { id: opts.jobId } })
  await leaveErrorGroupInTx(tx, job)
  const to = opts.to ?? 'failed'
  const stage = opts.stage ?? job.stageNow ?? 'initialization'
  await transitionJob(tx, {
    jobId: opts.jobId,
    from: status,
    to,
    data: {
      failedStage: stage,
      errorCode: opts.code,
      errorMessage: clientMessage(opts.message, stage),
      completedAt: new Date(),
      stageNow: null,
      creditsUsed: 0,
    },
  })
  await tx.stageRun.updateMany({
    where: { jobId: opts.jobId, stage, status: 'running' },
    data: { status: 'failed', error: clientMessage(opts.message, stage), completedAt: new Date() },
  })
  await endOpenDocuments(tx, opts.jobId, {
    status: 'failed',
    errorCode: opts.code,
    errorMessage: clientMessage(opts.message, stage),
  })
  await voidCredits(tx, { jobId: opts.jobId })
  await recordEvents(tx, [
    { workspaceId: job.workspaceId, jobId: opts.jobId, type: 'job.finished', data: { status: to } },
  ])
  return true
}

/** A stage errored for good (retries spent or a permanent error): the job fails and its whole hold is released. */
export async function failJob(
  deps: Pick<StageDeps, 'db' | 'onCommit'>,
  opts: { jobId: string; stage?: string; code: string; message: string; to?: JobStatus },
): Promise<boolean> {
  const changed = await deps.db.$transaction((tx) => failJobInTx(tx, opts))
  deps.onCommit?.()
  return changed
}
