import { type Db, directQuery, GroupCommit, type Job, type JobFile, type StageRun } from '@quire/db'
import { DIRECT_DISPATCH_GRACE_MS, OUTBOX_CHANNEL, type OutboxRowValues } from '@quire/queues'
import type { eventRow } from '../events/record-event.ts'
import { PLATFORM_PARSE_PIPELINE_ID } from '../pipelines/pipelines.ts'
import type { KeyState } from '../workspaces/api-keys.ts'

/** Everything `submit_jobs` writes for one job, built by createJob with every column given. */
export type SubmissionRows = {
  job: Job
  /** The job's pipeline definition as the JSON the pipeline cache made once. */
  definitionJson: string
  files: JobFile[]
  source: StageRun
  event: ReturnType<typeof eventRow>
  /** The outbox rows (outboxRowsOf) of the event's fan-out and of the first stage: no delay, no replace. */
  fanout: OutboxRowValues
  stage: OutboxRowValues
  entryId: string
  confirmKey: KeyState | null
}

/** What `submit_jobs` answers for a job (migration `*_submit_jobs_grouped`). */
const ANSWERS = ['held', 'key_changed', 'insufficient_credits', 'spending_cap', 'exists', 'missing'] as const
export type SubmissionAnswer = (typeof ANSWERS)[number]
const isAnswer = (a: unknown): a is SubmissionAnswer => (ANSWERS as readonly unknown[]).includes(a)

export type Submitted = { answer: SubmissionAnswer; stageRowId: string | null }

/**
 * The submissions of one process, written in groups per workspace (GroupCommit): the first job of a workspace goes
 * at once; the jobs that arrive while it is being written wait for it and then go together, one call of
 * `submit_jobs`, one transaction and one commit for all of them. A workspace's submissions take turns on its balance
 * row, and each turn now serves a group instead of one job; a submission alone waits for nothing.
 *
 * Each job is still decided on its own: its key confirmed, its credits reserved after the jobs ahead of it, a
 * refusal answered with its reason and leaving no row. A group that fails as a whole is written again job by job.
 */
class SubmissionGroups {
  private readonly groups: GroupCommit<SubmissionRows, Submitted>

  constructor(private readonly db: Db) {
    this.groups = new GroupCommit({
      writeGroup: (group) => this.write(group),
      writeOne: async (rows) => (await this.write([rows]))[0]!,
    })
  }

  submit(rows: SubmissionRows): Promise<Submitted> {
    return this.groups.write(rows.job.workspaceId, rows)
  }

  /** One call of `submit_jobs` for jobs of one workspace: each job's answer, in the group's order. */
  private async write(group: SubmissionRows[]): Promise<Submitted[]> {
    const jobs = group.map((g) => g.job)
    const files = group.flatMap((g, i) => g.files.map((file) => ({ file, job: i + 1 })))
    const { stage, fanout } = group[0]!
    const rows = await directQuery<{ answer: unknown; stage_row_id: string | null }>(this.db, {
      name: 'submit_jobs',
      text: `SELECT answer, stage_row_id FROM submit_jobs(${SUBMIT_JOBS_PARAMETERS})`,
      values: [
        jobs[0]!.workspaceId,
        jobs.map((j) => j.id),
        jobs.map((j) => j.pipelineId),
        jobs.map((j) => j.pipelineVersion),
        group.map((g) => g.definitionJson),
        jobs.map((j) => j.priority),
        jobs.map((j) => j.executionMode),
        jobs.map((j) => j.environment),
        jobs.map((j) => j.sourceTag),
        jobs.map((j) => j.clientReferenceId),
        jobs.map((j) => j.schemaId),
        jobs.map((j) => (j.metadata === null ? null : JSON.stringify(j.metadata))),
        jobs.map((j) => j.pageCount),
        jobs.map((j) => j.creditsReserved),
        // Timestamps are UTC wall-clock values in `timestamp` columns (the zone of the ISO string is ignored).
        jobs.map((j) => j.createdAt.toISOString()),
        jobs.map((j) => j.waitForReview),
        group.map((g) => g.confirmKey?.keyHash ?? null),
        group.map((g) => g.confirmKey?.fingerprint ?? null),
        group.map((g) => g.source.id),
        group.map((g) => g.event.id),
        group.map((g) => g.entryId),
        files.map((f) => f.job),
        files.map((f) => f.file.id),
        files.map((f) => f.file.position),
        files.map((f) => f.file.fileName),
        files.map((f) => f.file.fileType),
        files.map((f) => f.file.mimeType),
        files.map((f) => f.file.sizeBytes),
        files.map((f) => f.file.pageCount),
        files.map((f) => f.file.blobKey),
        stage.queue,
        stage.name,
        group.map((g) => g.stage.job_key),
        group.map((g) => JSON.stringify(g.stage.payload)),
        group.map((g) => g.stage.priority),
        fanout.queue,
        fanout.name,
        group.map((g) => g.fanout.job_key),
        group.map((g) => JSON.stringify(g.fanout.payload)),
        DIRECT_DISPATCH_GRACE_MS,
        OUTBOX_CHANNEL,
        PLATFORM_PARSE_PIPELINE_ID,
      ],
    })
    if (rows.length !== group.length || !rows.every((r) => isAnswer(r.answer)))
      throw new Error('submit_jobs: bad answer')
    return rows.map((r) => ({ answer: r.answer as SubmissionAnswer, stageRowId: r.stage_row_id }))
  }
}

const SUBMIT_JOBS_PARAMETERS = Array.from({ length: 42 }, (_, i) => `$${i + 1}`).join(', ')

const groupsOf = new WeakMap<Db, SubmissionGroups>()

/** The submission groups of a database client: one per process and client, shared by every request. */
export function submissionGroups(db: Db): SubmissionGroups {
  let groups = groupsOf.get(db)
  if (!groups) {
    groups = new SubmissionGroups(db)
    groupsOf.set(db, groups)
  }
  return groups
}
