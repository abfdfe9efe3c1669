import { createPrisma } from '@quire/db'
import { createOcrEngine, createParsePool } from '@quire/extraction'
import { createQueueSet, createRedis, stageQueueName, startOutboxRelay } from '@quire/queues'
import { createBlobStore, createDestinations } from '@quire/storage'
import { Worker } from 'bullmq'
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
const ocr = createOcrEngine({ workers: config.ocrWorkers })
// PDF parsing, rasterising and OCR run in child processes: the event loop stays free for lock renewal.
const parsePool =
  config.parseProcesses > 0
    ? createParsePool({ processes: config.parseProcesses, ocrWorkers: config.ocrWorkers })
    : undefined
const blobs = createBlobStore(config.blobStore)
const destinations = createDestinations(config.destinations)
const deps = {
  db,
  blobs,
  ocr,
  destinations,
  parsePool,
  onCommit: relay.kick,
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
  errorGroupRetryScheduleMs: config.errorGroupRetryScheduleMs,
  onCommit: relay.kick,
})
startHoldExpirySweeper({ db, log, intervalMs: config.sweepIntervalMs })

const workers = config.stages.map((stage) => {
  const worker = new Worker(stageQueueName(stage), createStageProcessor(deps, stage), {
    connection: createRedis(config.redisUrl, 'worker'),
    prefix: config.queuePrefix,
    concurrency: config.concurrency,
    lockDuration: config.lockMs,
    stalledInterval: Math.max(1000, Math.floor(config.lockMs / 2)),
    maxStalledCount: 3,
    settings: { backoffStrategy: (attemptsMade: number) => Math.min(30_000, 1000 * 2 ** (attemptsMade - 1)) },
  })
  worker.on('error', (err) => log.error({ err, stage }, 'worker error'))
  return worker
})
log.info({ stages: config.stages, concurrency: config.concurrency }, 'stage worker started')

async function shutdown(signal: string) {
  log.info({ signal }, 'shutting down')
  sweepers.stop()
  await Promise.all(workers.map((w) => w.close()))
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
