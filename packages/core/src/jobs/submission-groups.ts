import { type Db, directQuery, GroupCommit, type Job, type JobFile } from '@quire/db'
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
  event: ReturnType<typeof eventRow>
  /** The outbox rows (outboxRowsOf) of the event's fan-out and of the first stage: no delay, no replace. */
  fanout: OutboxRowValues
  stage: OutboxRowValues
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
      writeOne: (rows) => this.writeAlone(rows),
    })
  }

  submit(rows: SubmissionRows): Promise<Submitted> {
    return this.groups.write(rows.job.workspaceId, rows)
  }

  /**
   * A job alone (nothing else of its workspace waiting): SUBMIT_ONE, one plain statement that PostgreSQL plans once
   * per connection, instead of a `submit_jobs` call of one. When the statement cannot tell why its reservation was
   * refused (the balance changed between its snapshot and its UPDATE), nothing was written and `submit_jobs` decides.
   */
  private async writeAlone(g: SubmissionRows): Promise<Submitted> {
    // The job row has room for one file; a job of several (Form A's batch) keeps them in `job_files`.
    if (g.files.length !== 1) return (await this.write([g]))[0]!
    const [row] = await directQuery<{ answer: unknown; stage_row_id: string | null }>(this.db, {
      ...SUBMIT_ONE,
      values: submissionValues([g], 'one'),
    })
    if (row?.answer === 'undecided') return (await this.write([g]))[0]!
    if (!isAnswer(row?.answer)) throw new Error('submit one: bad answer')
    return { answer: row.answer, stageRowId: row.stage_row_id }
  }

  /** One call of `submit_jobs` for jobs of one workspace: each job's answer, in the group's order. */
  private async write(group: SubmissionRows[]): Promise<Submitted[]> {
    const rows = await directQuery<{ answer: unknown; stage_row_id: string | null }>(this.db, {
      name: 'submit_jobs',
      text: `SELECT answer, stage_row_id FROM submit_jobs(${SUBMIT_JOBS_PARAMETERS})`,
      values: submissionValues(group, 'group'),
    })
    if (rows.length !== group.length || !rows.every((r) => isAnswer(r.answer)))
      throw new Error('submit_jobs: bad answer')
    return rows.map((r) => ({ answer: r.answer as SubmissionAnswer, stageRowId: r.stage_row_id }))
  }
}

/**
 * What `submit_jobs` writes for one job, as one statement of data-modifying CTEs: the key confirmed, the credits
 * reserved by the ledger's conditional UPDATE (balance, spending cap of the current UTC month; after the ledger's
 * per-workspace queue, the advisory lock of `ledger_reserve_credits`), and only when both held: the job, the
 * `stage.exited` event of `source` (fanned out already unless the workspace has a webhook, then with its fan-out row)
 * and the first stage's outbox row. The job's one file and its pending hold (which records the reservation: no
 * `reserve` entry, migration `*_reserve_recorded_by_hold`) are columns of the job row, not rows of their own (migration
 * `*_lone_job_file_and_hold_in_job_row`: two tables, six indexes and two foreign-key checks fewer; bench/README.md,
 * 2026-12-06 12:08). Nothing is written otherwise, so a refusal needs no clean-up. It takes `submit_jobs`' parameters
 * in their order, each per-job value as itself, without the retired ones and with the file's five columns in place of
 * the files' arrays (submissionValues, `'one'`), used where they are needed. Both outbox rows (the first stage's, and
 * the fan-out's when owed) go in one INSERT. At one connection each submission pays the statement's fixed costs alone,
 * so its plan is kept small: a CTE of the job's values joined into every insert cost about 14% of PostgreSQL's CPU per
 * submission, a second insert into the outbox about 12% (bench/README.md, 2026-11-30). No `source` stage run: that
 * stage ends as the job is created, and its event says so (migration `*_source_stage_not_recorded`). The answer is
 * `submit_jobs`' own, or `undecided`: refused, yet the statement's snapshot shows enough credits (another transaction
 * changed the balance meanwhile).
 */
const SUBMIT_ONE = {
  name: 'submit_one',
  text: `WITH
    key_ok AS (
      SELECT $17::text IS NULL OR EXISTS (
        SELECT 1 FROM api_key_principal($17::text, $36::text) k WHERE k.fingerprint = $18::text) AS ok),
    clock AS (
      SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS period,
             clock_timestamp() AT TIME ZONE 'UTC' AS at),
    queued AS (
      SELECT pg_advisory_xact_lock(hashtextextended($1, 7302452271548921)) FROM key_ok WHERE ok),
    charged AS (
      UPDATE workspaces w SET
        credits_available = w.credits_available - $14::int,
        credits_reserved = w.credits_reserved + $14::int,
        spend_period_used = CASE WHEN w.spend_period = clock.period THEN w.spend_period_used ELSE 0 END + $14::int,
        spend_period = clock.period
      FROM clock, queued
      WHERE w.id = $1::text AND w.credits_available >= $14::int
        AND (w.spending_cap IS NULL OR
             CASE WHEN w.spend_period = clock.period THEN w.spend_period_used ELSE 0 END + $14::int
               <= w.spending_cap)
      RETURNING clock.period, clock.at),
    owed AS (
      SELECT EXISTS (SELECT 1 FROM webhooks WHERE workspace_id = $1) AS owed),
    job AS (
      INSERT INTO jobs (id, workspace_id, pipeline_id, pipeline_version, definition, status, stage_now, priority,
                        execution_mode, environment, source_tag, client_reference_id, schema_id, metadata, page_count,
                        credits_reserved, created_at, wait_for_review, file_name, file_type, mime_type, size_bytes,
                        blob_key, hold_period)
      SELECT $2::text, $1::text, $3::text, $4::int, $5::jsonb, 'queued', 'initialization', $6::text, $7::text,
             $8::text, $9::text, $10::text, $11::text, $12::jsonb, $13::int, $14::int, $15::timestamp(3), $16::boolean,
             $20::text, $21::text, $22::text, $23::int, $24::text, charged.period
      FROM charged),
    event AS (
      INSERT INTO events (id, workspace_id, job_id, type, stage, transition, data, created_at, fanned_out_at)
      SELECT $19::text, $1::text, $2::text, 'stage.exited', 'source', 'exited', '{}'::jsonb, $15::timestamp(3),
             CASE WHEN owed.owed THEN NULL ELSE $15::timestamp(3) END
      FROM charged, owed),
    queued_work AS (
      INSERT INTO outbox (queue, name, job_key, payload, priority, created_at, dispatch_after)
      SELECT $25::text, $26::text, $27::text, $28::jsonb, $29::int, $15::timestamp(3),
             charged.at + make_interval(secs => $34::int / 1000.0)
      FROM charged
      UNION ALL
      SELECT $30::text, $31::text, $32::text, $33::jsonb, NULL, $15::timestamp(3), NULL
      FROM charged, owed WHERE owed.owed
      RETURNING id, queue)
    SELECT CASE
             WHEN NOT key_ok.ok THEN 'key_changed'
             WHEN EXISTS (SELECT 1 FROM charged) THEN 'held'
             WHEN w.id IS NULL THEN 'missing'
             WHEN w.credits_available < $14::int THEN 'insufficient_credits'
             WHEN w.spending_cap IS NOT NULL AND
                  CASE WHEN w.spend_period = (SELECT period FROM clock) THEN w.spend_period_used ELSE 0 END
                    + $14::int > w.spending_cap THEN 'spending_cap'
             ELSE 'undecided' END AS answer,
           (SELECT id FROM queued_work WHERE queue = $25::text) AS stage_row_id,
           (SELECT pg_notify($35::text, $30::text)::text FROM charged, owed WHERE owed.owed) AS notified
    FROM key_ok LEFT JOIN workspaces w ON w.id = $1::text`,
}

/**
 * `submit_jobs`' parameters for jobs of one workspace (`'group'`), or SUBMIT_ONE's for one job of one file
 * (`'one'`): the same values in the same order, except that SUBMIT_ONE takes each per-job value as itself rather than
 * in an array, its file's columns in place of the files' arrays, and has no place for `submit_jobs`' retired
 * parameters.
 */
function submissionValues(group: SubmissionRows[], shape: 'group' | 'one'): unknown[] {
  const one = shape === 'one'
  // A per-job value: the column of every job's, or the only job's value itself.
  const perJob = <T>(of: (g: SubmissionRows) => T): T | T[] => (one ? of(group[0]!) : group.map(of))
  // `p_run_ids` and `p_entry_ids` (migrations `*_source_stage_not_recorded`, `*_reserve_recorded_by_hold`).
  const retired = one ? [] : [group.map(() => null)]
  const files = group.flatMap((g, i) => g.files.map((file) => ({ file, job: i + 1 })))
  const { stage, fanout } = group[0]!
  return [
    group[0]!.job.workspaceId,
    perJob((g) => g.job.id),
    perJob((g) => g.job.pipelineId),
    perJob((g) => g.job.pipelineVersion),
    perJob((g) => g.definitionJson),
    perJob((g) => g.job.priority),
    perJob((g) => g.job.executionMode),
    perJob((g) => g.job.environment),
    perJob((g) => g.job.sourceTag),
    perJob((g) => g.job.clientReferenceId),
    perJob((g) => g.job.schemaId),
    perJob((g) => (g.job.metadata === null ? null : JSON.stringify(g.job.metadata))),
    perJob((g) => g.job.pageCount),
    perJob((g) => g.job.creditsReserved),
    // Timestamps are UTC wall-clock values in `timestamp` columns (the zone of the ISO string is ignored).
    perJob((g) => g.job.createdAt.toISOString()),
    perJob((g) => g.job.waitForReview),
    perJob((g) => g.confirmKey?.keyHash ?? null),
    perJob((g) => g.confirmKey?.fingerprint ?? null),
    ...retired,
    perJob((g) => g.event.id),
    ...retired,
    ...(one ? loneFile(group[0]!) : fileColumns(files)),
    stage.queue,
    stage.name,
    perJob((g) => g.stage.job_key),
    perJob((g) => JSON.stringify(g.stage.payload)),
    perJob((g) => g.stage.priority),
    fanout.queue,
    fanout.name,
    perJob((g) => g.fanout.job_key),
    perJob((g) => JSON.stringify(g.fanout.payload)),
    DIRECT_DISPATCH_GRACE_MS,
    OUTBOX_CHANNEL,
    PLATFORM_PARSE_PIPELINE_ID,
  ]
}

/** `submit_jobs`' file parameters: one array per `job_files` column, each file tagged with its job's position. */
const fileColumns = (files: { file: JobFile; job: number }[]) => [
  files.map((f) => f.job),
  files.map((f) => f.file.id),
  files.map((f) => f.file.position),
  files.map((f) => f.file.fileName),
  files.map((f) => f.file.fileType),
  files.map((f) => f.file.mimeType),
  files.map((f) => f.file.sizeBytes),
  files.map((f) => f.file.pageCount),
  files.map((f) => f.file.blobKey),
]

/** SUBMIT_ONE's file parameters: the job's only file, for the job row's own columns. */
const loneFile = ({ files: [file] }: SubmissionRows) => [
  file!.fileName,
  file!.fileType,
  file!.mimeType,
  file!.sizeBytes,
  file!.blobKey,
]

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
