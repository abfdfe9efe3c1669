import { createPrisma } from '@quire/db'
import { createOcrEngine, createParsePool } from '@quire/extraction'
import {
  createQueueSet,
  createRedis,
  drainWorkers,
  handBackOnCancel,
  outageTolerant,
  stageQueueName,
  startOutboxRelay,
} from '@quire/queues'
import { createBlobStore, createDestinations } from '@quire/storage'
import type { WorkerStage } from '@quire/domain'
import { Worker } from 'bullmq'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { guardProcess } from '@quire/runtime'
import pino from 'pino'
import { config } from './config.ts'
import { createStageProcessor } from './processors/stage.processor.ts'
import { startJobSweepers } from './sweepers/job-sweepers.ts'
import { startHoldExpirySweeper } from './sweepers/hold-expiry.sweeper.ts'

const log = pino({ name: 'quire-stage-worker', level: config.logLevel })
guardProcess(log)
const db = createPrisma(config.databaseUrl)
const producer = createRedis(config.redisUrl, 'producer')
const queues = createQueueSet({ connection: producer, prefix: config.queuePrefix, stageAttempts: config.stageAttempts })
const relay = startOutboxRelay({
  db,
  queues,
  retentionMs: config.outboxRetentionMs,
  onError: (err) => log.warn({ err }, 'outbox relay pass failed; will retry'),
})
const ocr = createOcrEngine({ engine: config.ocrEngine, workers: config.ocrWorkers })
// PDF parsing, rasterising and OCR run in child processes: the event loop stays free for lock renewal.
const parsePool =
  config.parseProcesses > 0
    ? createParsePool({ processes: config.parseProcesses, ocrWorkers: config.ocrWorkers, ocrEngine: config.ocrEngine })
    : undefined
const blobs = createBlobStore(config.blobStore)
const destinations = createDestinations(config.destinations)
const deps = {
  db,
  blobs,
  ocr,
  destinations,
  parsePool,
  parseInlineMaxBytes: config.parseInlineMaxBytes,
  onCommit: relay.kick,
  checkpointMs: config.checkpointMs,
  log,
  errorGroupRetryScheduleMs: config.errorGroupRetryScheduleMs,
}
const sweepers = startJobSweepers({
  db,
  blobs,
  log,
  intervalMs: config.sweepIntervalMs,
  retentionMs: config.retentionMs,
  syncJobTimeoutMs: config.syncJobTimeoutMs,
  requeueAfterMs: config.requeueAfterMs,
  blobSweepIntervalMs: config.blobSweepIntervalMs,
  blobSweepMinAgeMs: config.blobSweepMinAgeMs,
  errorGroupRetryScheduleMs: config.errorGroupRetryScheduleMs,
  onCommit: relay.kick,
})
startHoldExpirySweeper({ db, log, intervalMs: config.sweepIntervalMs })

const onOutage = (info: { dependency: string; jobId?: string; queue: string }) =>
  log.warn(info, 'dependency unavailable; job delayed until it returns (no attempt spent)')
const onHandBack = (info: { jobId?: string; queue: string }) =>
  log.warn(info, 'shutdown grace ran out; job handed back to the queue')

// Stage chaining: after a stage, the next one runs here at once when this process serves it too.
const served = new Set(config.stages)
const serves = (stage: WorkerStage) => config.chainStages && served.has(stage)

// A warm start: the parse processes are ready before this worker takes a job (it shows on the queues only then).
if (parsePool && config.parseWarmStart !== 'off' && served.has('parse')) {
  const started = performance.now()
  await parsePool.warm(config.parseWarmStart).then(
    () => log.info({ ms: Math.round(performance.now() - started) }, 'parse processes started (warm start)'),
    (err) => log.warn({ err }, 'warm start failed; the parse processes load the rest on first use'),
  )
}

const STALLS_TOLERATED = 1_000
const workers = config.stages.map((stage) => {
  const processor = handBackOnCancel(outageTolerant(createStageProcessor(deps, stage, serves), { onOutage }), {
    onHandBack,
  })
  const worker = new Worker(stageQueueName(stage), processor, {
    connection: createRedis(config.redisUrl, 'worker'),
    prefix: config.queuePrefix,
    concurrency: config.concurrency,
    lockDuration: config.lockMs,
    stalledInterval: Math.max(1000, Math.floor(config.lockMs / 2)),
    // A stall is this process dying mid-stage (kill -9, OOM), not the job's fault: stages are idempotent, so a
    // stalled job is handed out again rather than failed by BullMQ (a failed job would wait for the requeue sweep,
    // QUIRE_REQUEUE_AFTER_MS). A document that itself kills its reader kills a parse process, not this one.
    maxStalledCount: STALLS_TOLERATED,
    settings: { backoffStrategy: (attemptsMade: number) => Math.min(30_000, 1000 * 2 ** (attemptsMade - 1)) },
  })
  worker.on('error', (err) => log.error({ err, stage }, 'worker error'))
  worker.on('stalled', (jobId) =>
    log.warn({ jobId, stage }, 'job stalled: its lock expired before the worker renewed it'),
  )
  return worker
})
log.info({ stages: config.stages, concurrency: config.concurrency }, 'stage worker started')

// Event-loop delay: the longest the loop was held in each window (CPU-heavy work belongs in the parse processes).
// A block near the lock duration loses jobs to the stalled check, so a long one is a warning; every window's figure
// is logged at debug. The histogram is a libuv timer sampling every 20 ms: cheap.
const EVENT_LOOP_WINDOW_MS = 5_000
const EVENT_LOOP_WARN_MS = Math.min(1_000, Math.floor(config.lockMs / 4))
const loopDelay = monitorEventLoopDelay({ resolution: 20 })
loopDelay.enable()
const loopSampler = setInterval(() => {
  const maxMs = Math.round(loopDelay.max / 1e6)
  const info = { maxMs, p99Ms: Math.round(loopDelay.percentile(99) / 1e6), windowMs: EVENT_LOOP_WINDOW_MS }
  loopDelay.reset()
  if (maxMs >= EVENT_LOOP_WARN_MS) log.warn(info, 'event loop blocked')
  else log.debug(info, 'event loop delay')
}, EVENT_LOOP_WINDOW_MS)
loopSampler.unref()

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: no new jobs; finishing the jobs under way')
  sweepers.stop()
  const { graceExceeded } = await drainWorkers(workers, config.shutdownGraceMs)
  log.info({ graceExceeded }, graceExceeded ? 'grace ran out; unfinished jobs handed back' : 'jobs under way finished')
  await relay.stop()
  await queues.close()
  await ocr.close()
  await parsePool?.close()
  producer.disconnect()
  await db.$disconnect()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
