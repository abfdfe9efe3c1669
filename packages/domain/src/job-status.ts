/** The job state machine: the only place that says which status may follow which. */
export const JOB_STATUSES = [
  'queued',
  'preprocessing',
  'processing',
  'awaiting_review',
  'completed',
  'completed_with_errors',
  'failed',
  'timed_out',
  'cancelled',
  'blocked',
  'partial',
] as const
export type JobStatus = (typeof JOB_STATUSES)[number]

export const FINAL_JOB_STATUSES: readonly JobStatus[] = [
  'completed',
  'completed_with_errors',
  'failed',
  'timed_out',
  'cancelled',
]

export const isFinalStatus = (s: JobStatus): boolean => FINAL_JOB_STATUSES.includes(s)

/** A job that ended without a result (cancelled, failed, timed out): nothing of it is delivered or charged any more. */
export const endedWithoutResult = (s: JobStatus): boolean =>
  isFinalStatus(s) && s !== 'completed' && s !== 'completed_with_errors'

const RUNNING: readonly JobStatus[] = ['queued', 'preprocessing', 'processing', 'awaiting_review', 'blocked', 'partial']

const TRANSITIONS: Record<JobStatus, readonly JobStatus[]> = {
  queued: ['preprocessing', 'processing', 'cancelled', 'failed', 'timed_out', 'blocked'],
  preprocessing: ['processing', 'cancelled', 'failed', 'timed_out', 'blocked'],
  processing: [
    'awaiting_review',
    'completed',
    'completed_with_errors',
    'failed',
    'cancelled',
    'timed_out',
    'blocked',
    'partial',
  ],
  awaiting_review: ['processing', 'completed', 'completed_with_errors', 'failed', 'cancelled', 'timed_out'],
  // A blocked job re-runs the stage that blocked it (initialization runs as preprocessing).
  blocked: ['preprocessing', 'processing', 'failed', 'cancelled', 'timed_out'],
  partial: ['processing', 'completed', 'completed_with_errors', 'failed', 'cancelled', 'timed_out'],
  completed: [],
  completed_with_errors: [],
  failed: [],
  timed_out: [],
  cancelled: [],
}

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return from === to ? RUNNING.includes(from) : TRANSITIONS[from].includes(to)
}

/** Statuses a job may be in for cancel to apply. */
export const isCancellable = (s: JobStatus): boolean => !isFinalStatus(s)
