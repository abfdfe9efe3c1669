import { WORKER_STAGES, isWorkerStage, type WorkerStage } from '@quire/domain'
import {
  BoolEnv,
  BlobStoreEnv,
  ConfigError,
  configOrExit,
  intEnv,
  intListEnv,
  parseEnv,
  FileLimitsEnv,
  DestinationsEnv,
  SharedEnv,
  blobStoreConfig,
  fileLimitsConfig,
  destinationsConfig,
  sharedConfig,
} from '@quire/config'
import { configureFileLimits, DEFAULT_OCR_ENGINE, OCR_ENGINES } from '@quire/extraction'
import { z } from 'zod'

const Env = SharedEnv.extend({
  ...BlobStoreEnv.shape,
  ...FileLimitsEnv.shape,
  ...DestinationsEnv.shape,
  /** Waits between an error group's automatic retries; after the last one a job blocking again escalates it. */
  QUIRE_ERROR_GROUP_RETRY_SCHEDULE_MS: intListEnv({ min: 0, default: [60_000, 300_000, 1_800_000] }),
  QUIRE_STAGES: z.string().default(''),
  QUIRE_STAGE_CONCURRENCY: intEnv({ min: 1, default: 2 }),
  /** How long a worker's lock on a job lasts; a killed worker's job is picked up again after it lapses. */
  QUIRE_STAGE_LOCK_MS: intEnv({ min: 1000, default: 30_000 }),
  QUIRE_JOB_RETENTION_MS: intEnv({ min: 1, default: 86_400_000 }),
  /** A synchronous job still running after this long ends as timed_out. */
  QUIRE_SYNC_JOB_TIMEOUT_MS: intEnv({ min: 1, default: 600_000 }),
  QUIRE_SWEEP_INTERVAL_MS: intEnv({ min: 100, default: 60_000 }),
  /** How often the blob store is listed for files no live job owns (each worker, at a random offset); 0: never. */
  QUIRE_BLOB_SWEEP_INTERVAL_MS: intEnv({ min: 0, default: 3_600_000 }).refine(
    (n) => n === 0 || n >= 100,
    'expected 0 (never) or at least 100 (ms)',
  ),
  /** A file no live job owns is deleted once it is this old (a submission stores its files just before it commits). */
  QUIRE_BLOB_SWEEP_MIN_AGE_MS: intEnv({ min: 1000, default: 3_600_000 }),
  /** Work without progress for this long is queued again (a no-op while Redis still holds it). */
  QUIRE_REQUEUE_AFTER_MS: intEnv({ min: 100, default: 300_000 }),
  QUIRE_OCR_WORKERS: intEnv({ min: 1, default: 1 }),
  /**
   * Which OCR engine reads scans (packages/extraction README, "OCR engines"): `fused` (default; tesseract and
   * PaddleOCR PP-OCRv4 both read each page and extraction fuses their fields: the most fields right on real receipts,
   * the CPU of both), `paddle` (one reading, about half the CPU), `tesseract` (fastest; reads ö, ß, ç, ñ),
   * `combined` (tesseract, then Paddle on the figures it doubts), `tesseract-prep`.
   */
  QUIRE_OCR_ENGINE: z
    .enum(OCR_ENGINES, { error: `expected one of ${OCR_ENGINES.join(', ')}` })
    .default(DEFAULT_OCR_ENGINE),
  /** Child processes that parse documents (PDF, rasterising, OCR) off the event loop; 0 parses in-process. */
  QUIRE_PARSE_PROCESSES: intEnv({ min: 0, default: 2 }),
  /**
   * What the parse processes load before this worker takes its first job: `off` (everything on first use),
   * `processes` (the processes start with their modules, about 140 MB each), `ocr` (their OCR engines too, with the
   * model, and each reads a generated scanned page: 250-300 MB more each, what a first scan grows it to, and 3-4 s of
   * CPU, so a new worker's first scanned pages are no slower than the rest; for OCR-heavy deployments that add
   * workers under load).
   */
  QUIRE_PARSE_WARM_START: z
    .enum(['off', 'processes', 'ocr'], { error: 'expected off, processes or ocr' })
    .default('off'),
  /**
   * With parse processes: a PDF of at most two pages and this many bytes has its text layer read in this process (a
   * round trip to a parse process costs more than such a parse); it goes to them when a page needs OCR. 0: never.
   */
  QUIRE_PARSE_INLINE_MAX_BYTES: intEnv({ min: 0, default: 256 * 1024 }),
  /** Run the following stages this process serves right after a stage, without a queue hop (stage chaining). */
  QUIRE_STAGE_CHAIN: BoolEnv.default(true),
  /** A chained stage that ran this long (ms) is committed at once; cheaper ones commit together (0: every stage). */
  QUIRE_STAGE_CHECKPOINT_MS: intEnv({ min: 0, default: 1_000 }),
})

function load() {
  const env = parseEnv(Env, process.env)
  const requested = env.QUIRE_STAGES.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = requested.filter((s) => !isWorkerStage(s))
  if (unknown.length)
    throw new ConfigError(
      `QUIRE_STAGES names unknown stages: ${unknown.join(', ')} (known: ${WORKER_STAGES.join(', ')})`,
    )
  return {
    ...sharedConfig(env),
    stages: (requested.length ? requested : WORKER_STAGES) as WorkerStage[],
    blobStore: blobStoreConfig(env),
    fileLimits: fileLimitsConfig(env),
    destinations: destinationsConfig(env),
    errorGroupRetryScheduleMs: env.QUIRE_ERROR_GROUP_RETRY_SCHEDULE_MS,
    concurrency: env.QUIRE_STAGE_CONCURRENCY,
    lockMs: env.QUIRE_STAGE_LOCK_MS,
    ocrWorkers: env.QUIRE_OCR_WORKERS,
    ocrEngine: env.QUIRE_OCR_ENGINE,
    parseProcesses: env.QUIRE_PARSE_PROCESSES,
    parseInlineMaxBytes: env.QUIRE_PARSE_INLINE_MAX_BYTES,
    parseWarmStart: env.QUIRE_PARSE_WARM_START,
    chainStages: env.QUIRE_STAGE_CHAIN,
    checkpointMs: env.QUIRE_STAGE_CHECKPOINT_MS,
    retentionMs: env.QUIRE_JOB_RETENTION_MS,
    syncJobTimeoutMs: env.QUIRE_SYNC_JOB_TIMEOUT_MS,
    sweepIntervalMs: env.QUIRE_SWEEP_INTERVAL_MS,
    blobSweepIntervalMs: env.QUIRE_BLOB_SWEEP_INTERVAL_MS,
    blobSweepMinAgeMs: env.QUIRE_BLOB_SWEEP_MIN_AGE_MS,
    requeueAfterMs: env.QUIRE_REQUEUE_AFTER_MS,
  }
}

export type WorkerConfig = ReturnType<typeof load>
// A bad configuration stops the process here, before anything connects (exit code 78, one message).
export const config: WorkerConfig = configOrExit(load)
// What a file may cost to read holds for every reader in this process (and its parse children) from the start.
configureFileLimits(config.fileLimits)
