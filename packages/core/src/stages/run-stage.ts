import {
  creditsForPages,
  isFinalStatus,
  newId,
  nextStage,
  PER_DOCUMENT_STAGES,
  PipelineDefinition,
  type JobStatus,
  type WorkerStage,
} from '@quire/domain'
import type { Tx } from '@quire/db'
import { settleCredits, voidCredits } from '@quire/ledger'
import { outbox, outboxWriteCount, type Priority } from '@quire/queues'
import { recordEvents, type EventInput } from '../events/record-event.ts'
import { leaveErrorGroupInTx } from '../jobs/error-groups.ts'
import { lockJob, transitionJob } from '../jobs/job-transitions.ts'
import { destinationStage } from './destination.stage.ts'
import { extractStage } from './extract.stage.ts'
import { initializationStage } from './initialization.stage.ts'
import { parseStage } from './parse.stage.ts'
import { postProcessingStage } from './post-processing.stage.ts'
import { splitClassifyStage } from './split-classify.stage.ts'
import {
  leafDocuments,
  loadJobForStage,
  loadJobForStageInTx,
  type LoadedDocument,
  type StageDeps,
  type StageExecutor,
  type StageOutput,
} from './stage-context.ts'
import { validateStage } from './validate.stage.ts'
import { clientMessage } from './client-message.ts'

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

/** The job left the running states (cancelled, failed elsewhere): the stage's work is discarded. */
class JobNoLongerRunning extends Error {}

export type StageRunResult = 'completed' | 'skipped' | 'already_done' | 'stopped'

function stageEvents(
  job: { id: string; workspaceId: string },
  stage: WorkerStage,
  transition: 'entered' | 'exited',
  docs: LoadedDocument[] | null,
  snapshot: Record<string, unknown>,
): EventInput[] {
  const base = { workspaceId: job.workspaceId, jobId: job.id, stage, transition, type: `stage.${transition}` as const }
  const data = transition === 'exited' ? { job: snapshot } : {}
  if (docs === null) return [{ ...base, data }]
  return docs.map((d) => ({ ...base, documentId: d.id, data }))
}

/**
 * Runs one stage of one job. Idempotent: a stage already recorded as done is not run again, and a re-run after a
 * crash rewrites the same rows (deterministic document ids, upserts). The stage's results, its completion, its
 * events and the next stage's queue message commit in one transaction.
 */
export async function runStage(deps: StageDeps, opts: { jobId: string; stage: WorkerStage }): Promise<StageRunResult> {
  return (await runOneStage(deps, opts)).result
}

/**
 * Runs a stage and then, in this process, every following stage `serves` says this process runs, without a queue
 * hop between them (each stage still commits its own exit: a durable checkpoint). A stage whose successor this
 * process does not serve queues it through the outbox as runStage does. Crash safety: the chain runs inside the
 * first stage's queue job; if the process dies, that job is handed out again, its stage is `already_done` with
 * `continuedInline` set, and the chain resumes from the first stage not done.
 */
export async function runStages(
  deps: StageDeps,
  opts: {
    jobId: string
    stage: WorkerStage
    serves: (stage: WorkerStage) => boolean
    onStage?: (s: WorkerStage) => void
  },
): Promise<StageRunResult> {
  let stage = opts.stage
  for (;;) {
    opts.onStage?.(stage)
    const { result, inlineNext } = await runOneStage(deps, { jobId: opts.jobId, stage, inline: opts.serves })
    if (!inlineNext) return result
    stage = inlineNext
  }
}

type StageOutcome = { result: StageRunResult; inlineNext: WorkerStage | null }

async function runOneStage(
  deps: StageDeps,
  opts: { jobId: string; stage: WorkerStage; inline?: (stage: WorkerStage) => boolean },
): Promise<StageOutcome> {
  const { stage, jobId } = opts
  const executor = EXECUTORS[stage]
  const job = await loadJobForStage(deps.db, jobId)
  if (!job || job.expiredAt || isFinalStatus(job.status as JobStatus)) return { result: 'stopped', inlineNext: null }
  const existing = job.stageRuns.find((r) => r.stage === stage)
  if (existing && (existing.status === 'completed' || existing.status === 'skipped')) {
    // Only a stage whose own exit chose to go on inline may resume the chain: otherwise the next stage has its own
    // queue job, and running it here too would run it twice at once.
    const next = existing.continuedInline && opts.inline ? nextStage(stage) : null
    return { result: 'already_done', inlineNext: next }
  }

  const definition = PipelineDefinition.parse(job.definition)
  const enabled = executor.enabled?.(definition) ?? true
  const perDocument = PER_DOCUMENT_STAGES.includes(stage)
  const docs = perDocument ? executor.documentsFor(job) : null
  const startedAt = new Date()

  const writesBeforeEnter = outboxWriteCount()
  try {
    await deps.db.$transaction(async (tx) => {
      const status = await lockJob(tx, jobId)
      if (!status || isFinalStatus(status)) throw new JobNoLongerRunning()
      const to: JobStatus = stage === 'initialization' ? 'preprocessing' : 'processing'
      const data = { stageNow: stage, startedAt: job.startedAt ?? startedAt }
      if (status === to) await tx.job.update({ where: { id: jobId }, data })
      else await transitionJob(tx, { jobId, from: status, to, data })
      if (!enabled) return
      if (existing) {
        await tx.stageRun.update({
          where: { id: existing.id },
          data: { attempts: { increment: 1 }, status: 'running' },
        })
        return
      }
      await tx.stageRun.create({ data: { id: newId('run'), jobId, stage, status: 'running', startedAt } })
      const events = stageEvents(job, stage, 'entered', docs, {})
      if (stage === 'initialization') events.unshift({ workspaceId: job.workspaceId, jobId, type: 'job.started' })
      await recordEvents(tx, events)
    })
  } catch (err) {
    if (err instanceof JobNoLongerRunning) return { result: 'stopped', inlineNext: null }
    throw err
  }
  // The relay is kicked only when the transaction queued something (an empty pass still costs three statements).
  if (outboxWriteCount() !== writesBeforeEnter) deps.onCommit?.()

  // CPU the stage used: its share of this process's (withStageCpu) plus what it reports from elsewhere (the parse
  // processes, with the programs they run). Form A shows the sum as machine_seconds.
  const { value: output, cpuMs: ownCpuMs } = await withStageCpu(
    async (): Promise<StageOutput> => (enabled ? await executor.run({ deps, job, definition }) : {}),
  )
  const cpuMs = ownCpuMs + (output.cpuMs ?? 0)
  const completedAt = new Date()
  let inlineNext: WorkerStage | null = null

  const writesBeforeExit = outboxWriteCount()
  try {
    await deps.db.$transaction(async (tx) => {
      inlineNext = null
      const status = await lockJob(tx, jobId)
      if (!status || isFinalStatus(status)) throw new JobNoLongerRunning()
      await output.apply?.(tx)
      const failed = output.failedDocuments ?? []
      for (const f of failed) {
        await tx.document.update({
          where: { id: f.documentId },
          data: { status: 'failed', errorCode: f.code, errorMessage: clientMessage(f.message, stage) },
        })
        await tx.documentEvent.create({
          data: {
            id: newId('dev'),
            documentId: f.documentId,
            type: 'failed',
            data: { stage, code: f.code, message: clientMessage(f.message, stage) },
          },
        })
      }
      // Only what the exit decides on (one query; the documents' contents are not read back).
      const [after] = await tx.$queryRaw<{ error_group_id: string | null; documents: number; live: number }[]>`
        SELECT (SELECT error_group_id FROM jobs WHERE id = ${jobId}) AS error_group_id,
               count(*)::int AS documents,
               (count(*) FILTER (WHERE status::text NOT IN ('failed', 'split')))::int AS live
        FROM documents WHERE job_id = ${jobId}`
      if (!after) throw new JobNoLongerRunning()
      const nothingLeft = after.documents > 0 && after.live === 0
      const next = nextStage(stage)
      if (next && !nothingLeft && !output.holdForReview && opts.inline?.(next)) inlineNext = next
      const runData = {
        continuedInline: inlineNext !== null,
        status: !enabled ? ('skipped' as const) : nothingLeft ? ('failed' as const) : ('completed' as const),
        completedAt,
        ms: completedAt.getTime() - startedAt.getTime(),
        credits: output.credits ?? 0,
        cpuMs,
        error: failed.length
          ? failed
              .map((f) => clientMessage(f.message, stage))
              .join('; ')
              .slice(0, 2000)
          : null,
      }
      await tx.stageRun.upsert({
        where: { jobId_stage: { jobId, stage } },
        update: runData,
        create: { id: newId('run'), jobId, stage, startedAt, ...runData },
      })
      if (nothingLeft) {
        const first = failed[0]
        await failJobInTx(tx, {
          jobId,
          stage,
          code: first?.code ?? 'stage_failed',
          message: first ? clientMessage(first.message, stage) : 'no document left',
        })
        return
      }
      // The stage that blocked the job (if any) has now completed: the job leaves its error group.
      await leaveErrorGroupInTx(tx, { id: jobId, workspaceId: job.workspaceId, errorGroupId: after.error_group_id })
      const exitedDocs = docs?.filter((d) => !failed.some((f) => f.documentId === d.id)) ?? null
      const snapshot = { status: status, stage_now: stage }
      const events = enabled
        ? [...stageEvents(job, stage, 'exited', exitedDocs, snapshot), ...(output.events ?? [])]
        : []
      await recordEvents(tx, events)
      if (output.holdForReview) {
        // Resumed by core reviewDocument once every parked document is decided; nothing is queued meanwhile.
        await transitionJob(tx, { jobId, from: status, to: 'awaiting_review', data: { stageNow: stage } })
      } else if (inlineNext) {
        // Nothing queued: this process runs it next (runStages).
      } else if (next) {
        await outbox.stage(tx, { stage: next, jobId }, { priority: (job.priority as Priority) ?? 'standard' })
      } else {
        await finishJobInTx(tx, { jobId, from: status })
      }
    })
  } catch (err) {
    if (err instanceof JobNoLongerRunning) return { result: 'stopped', inlineNext: null }
    throw err
  }
  if (outboxWriteCount() !== writesBeforeExit) deps.onCommit?.()
  return { result: enabled ? 'completed' : 'skipped', inlineNext }
}

/**
 * The job's last stage is done: settle the hold to what was processed (the pages of the documents that did not
 * fail, never more than the stages charged) and finish as `completed`, or `completed_with_errors` when a document
 * failed on the way (DESIGN: one document of several failing does not sink the others).
 */
async function finishJobInTx(tx: Tx, opts: { jobId: string; from: JobStatus }) {
  const job = await loadJobForStageInTx(tx, opts.jobId)
  if (!job) throw new JobNoLongerRunning()
  const definition = PipelineDefinition.parse(job.definition)
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
  const to: JobStatus = firstFailure ? 'completed_with_errors' : 'completed'
  await transitionJob(tx, {
    jobId: job.id,
    from: opts.from,
    to,
    data: {
      stageNow: null,
      completedAt: new Date(),
      creditsUsed: settled?.posted ?? used,
      ...(firstFailure
        ? {
            failedStage: firstFailure.stage,
            errorCode: firstFailedDocument?.errorCode ?? 'document_failed',
            errorMessage: firstFailedDocument?.errorMessage ?? firstFailure.error,
          }
        : {}),
    },
  })
  await recordEvents(tx, [{ workspaceId: job.workspaceId, jobId: job.id, type: 'job.finished', data: { status: to } }])
}

async function failJobInTx(
  tx: Tx,
  opts: { jobId: string; stage: string; code: string; message: string; to?: JobStatus },
) {
  const status = await lockJob(tx, opts.jobId)
  if (!status || isFinalStatus(status)) return false
  const job = await tx.job.findUniqueOrThrow({ where: { id: opts.jobId } })
  await leaveErrorGroupInTx(tx, job)
  const to = opts.to ?? 'failed'
  await transitionJob(tx, {
    jobId: opts.jobId,
    from: status,
    to,
    data: {
      failedStage: opts.stage,
      errorCode: opts.code,
      errorMessage: clientMessage(opts.message, opts.stage),
      completedAt: new Date(),
      stageNow: null,
      creditsUsed: 0,
    },
  })
  await tx.stageRun.updateMany({
    where: { jobId: opts.jobId, stage: opts.stage, status: 'running' },
    data: { status: 'failed', error: clientMessage(opts.message, opts.stage), completedAt: new Date() },
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
  opts: { jobId: string; stage: string; code: string; message: string; to?: JobStatus },
): Promise<boolean> {
  const changed = await deps.db.$transaction((tx) => failJobInTx(tx, opts))
  deps.onCommit?.()
  return changed
}
