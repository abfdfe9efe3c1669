/** Pipeline stages in the order a job runs them. Do not rename: they are queue names and event names. */
export const STAGES = [
  'source',
  'initialization',
  'parse',
  'split_classify',
  'extract',
  'validate',
  'post_processing',
  'destination',
] as const
export type Stage = (typeof STAGES)[number]

/** `source` happens inside the submission request; the rest run on stage workers. */
export const WORKER_STAGES = STAGES.filter((s) => s !== 'source') as Exclude<Stage, 'source'>[]
export type WorkerStage = (typeof WORKER_STAGES)[number]

/** Stages whose events fire once per document and carry `document_id`. */
export const PER_DOCUMENT_STAGES: readonly Stage[] = ['parse', 'split_classify', 'extract', 'post_processing']

export const isStage = (s: string): s is Stage => (STAGES as readonly string[]).includes(s)

const STAGE_POSITION = new Map<string, number>(STAGES.map((s, i) => [s, i]))

/** A stage's place in the pipeline order (`source` is 0); a name that is not a stage comes after every stage. */
export const stagePosition = (stage: string): number => STAGE_POSITION.get(stage) ?? STAGES.length
export const isWorkerStage = (s: string): s is WorkerStage => (WORKER_STAGES as readonly string[]).includes(s)

export function nextStage(stage: WorkerStage): WorkerStage | null {
  const i = WORKER_STAGES.indexOf(stage)
  return WORKER_STAGES[i + 1] ?? null
}
