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
import { outbox, type Priority } from '@quire/queues'
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
  type LoadedDocument,
  type StageDeps,
  type StageExecutor,
} from './stage-context.ts'
import { validateStage } from './validate.stage.ts'

const EXECUTORS: Record<WorkerStage, StageExecutor> = {
  initialization: initializationStage,
  parse: parseStage,
  split_classify: splitClassifyStage,
  extract: extractStage,
  validate: validateStage,
  post_processing: postProcessingStage,
  destination: destinationStage,
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
  const { stage, jobId } = opts
  const executor = EXECUTORS[stage]
  const job = await loadJobForStage(deps.db, jobId)
  if (!job || job.expiredAt || isFinalStatus(job.status as JobStatus)) return 'stopped'
  const existing = job.stageRuns.find((r) => r.stage === stage)
  if (existing && (existing.status === 'completed' || existing.status === 'skipped')) return 'already_done'

  const definition = PipelineDefinition.parse(job.definition)
  const enabled = executor.enabled?.(definition) ?? true
  const perDocument = PER_DOCUMENT_STAGES.includes(stage)
  const docs = perDocument ? executor.documentsFor(job) : null
  const startedAt = new Date()

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
    if (err instanceof JobNoLongerRunning) return 'stopped'
    throw err
  }
  deps.onCommit?.()

  // CPU the stage used: this process's (the stage worker runs few stages at once, so close to the stage's own) plus
  // what it reports from elsewhere (the parse processes). Form A shows the sum as machine_seconds.
  const cpuBefore = process.cpuUsage()
  const output = enabled ? await executor.run({ deps, job, definition }) : {}
  const cpu = process.cpuUsage(cpuBefore)
  const cpuMs = Math.round((cpu.user + cpu.system) / 1000) + (output.cpuMs ?? 0)
  const completedAt = new Date()

  try {
    await deps.db.$transaction(async (tx) => {
      const status = await lockJob(tx, jobId)
      if (!status || isFinalStatus(status)) throw new JobNoLongerRunning()
      await output.apply?.(tx)
      const failed = output.failedDocuments ?? []
      for (const f of failed) {
        await tx.document.update({
          where: { id: f.documentId },
          data: { status: 'failed', errorCode: f.code, errorMessage: f.message.slice(0, 2000) },
        })
        await tx.documentEvent.create({
          data: {
            id: newId('dev'),
            documentId: f.documentId,
            type: 'failed',
            data: { stage, code: f.code, message: f.message },
          },
        })
      }
      const after = await loadJobForStage(tx, jobId)
      if (!after) throw new JobNoLongerRunning()
      const live = after.documents.filter((d) => d.status !== 'failed' && d.status !== 'split')
      const nothingLeft = after.documents.length > 0 && live.length === 0
      const runData = {
        status: !enabled ? ('skipped' as const) : nothingLeft ? ('failed' as const) : ('completed' as const),
        completedAt,
        ms: completedAt.getTime() - startedAt.getTime(),
        credits: output.credits ?? 0,
        cpuMs,
        error: failed.length
          ? failed
              .map((f) => f.message)
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
          message: first?.message ?? 'no document left',
        })
        return
      }
      // The stage that blocked the job (if any) has now completed: the job leaves its error group.
      await leaveErrorGroupInTx(tx, after)
      const exitedDocs = docs?.filter((d) => !failed.some((f) => f.documentId === d.id)) ?? null
      const snapshot = { status: status, stage_now: stage }
      const events = enabled
        ? [...stageEvents(job, stage, 'exited', exitedDocs, snapshot), ...(output.events ?? [])]
        : []
      await recordEvents(tx, events)
      const next = nextStage(stage)
      if (output.holdForReview) {
        // Resumed by core reviewDocument once every parked document is decided; nothing is queued meanwhile.
        await transitionJob(tx, { jobId, from: status, to: 'awaiting_review', data: { stageNow: stage } })
      } else if (next) {
        await outbox.stage(tx, { stage: next, jobId }, { priority: (job.priority as Priority) ?? 'standard' })
      } else {
        await finishJobInTx(tx, { jobId, from: status })
      }
    })
  } catch (err) {
    if (err instanceof JobNoLongerRunning) return 'stopped'
    throw err
  }
  deps.onCommit?.()
  return enabled ? 'completed' : 'skipped'
}

/**
 * The job's last stage is done: settle the hold to what was processed (the pages of the documents that did not
 * fail, never more than the stages charged) and finish as `completed`, or `completed_with_errors` when a document
 * failed on the way (DESIGN: one document of several failing does not sink the others).
 */
async function finishJobInTx(tx: Tx, opts: { jobId: string; from: JobStatus }) {
  const job = await loadJobForStage(tx, opts.jobId)
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
      errorMessage: opts.message.slice(0, 2000),
      completedAt: new Date(),
      stageNow: null,
      creditsUsed: 0,
    },
  })
  await tx.stageRun.updateMany({
    where: { jobId: opts.jobId, stage: opts.stage, status: 'running' },
    data: { status: 'failed', error: opts.message.slice(0, 2000), completedAt: new Date() },
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
