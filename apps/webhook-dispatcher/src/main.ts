import { createPrisma } from '@quire/db'
import {
  createQueueSet,
  createRedis,
  DELIVERY_QUEUE,
  drainWorkers,
  FANOUT_QUEUE,
  handBackOnCancel,
  outageTolerant,
  startDirectDispatch,
  startOutboxRelay,
} from '@quire/queues'
import { createGuardedDispatcher } from '@quire/webhooks'
import { Worker } from 'bullmq'
import { guardProcess } from '@quire/runtime'
import pino from 'pino'
import { openProcessSecretBox, SECRET_LOG_REDACT_PATHS } from '@quire/secrets'
import { config } from './config.ts'
import { createDeliveryProcessor } from './processors/deliver-webhook.processor.ts'
import { createFanoutProcessor } from './processors/fanout.processor.ts'
import { limitConcurrency } from './batching/limit-concurrency.ts'
import { createDeliveryBatching } from './use-cases/delivery-rows.ts'
import { rememberOpened } from './batching/remember-opened.ts'

const log = pino({
  name: 'quire-webhook-dispatcher',
  level: config.logLevel,
  redact: { paths: SECRET_LOG_REDACT_PATHS, censor: '[redacted]' },
})
guardProcess(log)
const secrets = openProcessSecretBox(config.secrets, log)
const db = createPrisma(config.databaseUrl)
const producer = createRedis(config.redisUrl, 'producer')
const queues = createQueueSet({ connection: producer, prefix: config.queuePrefix, stageAttempts: config.stageAttempts })
const relay = startOutboxRelay({
  db,
  queues,
  retentionMs: config.outboxRetentionMs,
  // Events are recorded by every app; their fan-out starts when they commit, not at the next poll.
  listen: { databaseUrl: config.databaseUrl, queues: [FANOUT_QUEUE, DELIVERY_QUEUE] },
  onError: (err) => log.warn({ err }, 'outbox relay pass failed; will retry'),
})
// A fan-out's first attempts go to BullMQ from here right after its commit; sent rows are marked together.
const direct = startDirectDispatch({
  db,
  queues,
  kickRelay: relay.kick,
  onError: (err) => log.warn({ err }, 'first attempts left to the outbox relay'),
})
const dispatcher = createGuardedDispatcher({
  allowPrivate: config.allowPrivate,
  connectTimeoutMs: config.connectTimeoutMs,
  ca: config.ca,
})

const onOutage = (info: { dependency: string; jobId?: string; queue: string }) =>
  log.warn(info, 'dependency unavailable; job delayed until it returns (no attempt spent)')
const onHandBack = (info: { jobId?: string; queue: string }) =>
  log.warn(info, 'shutdown grace ran out; job handed back to the queue')
// A stall means this process died mid-job (kill -9, OOM), never that the job is bad: fan-out and delivery are
// idempotent per event and delivery id, so a stalled job is always handed back, never failed by BullMQ (a failed job
// under its deterministic id would leave PostgreSQL's pending row waiting for the requeue sweep).
const STALLS_TOLERATED = 1_000
const FANOUT_CONCURRENCY = 50
// QUIRE_DELIVERY_CONCURRENCY bounds the POSTs in flight. A delivery job also reads its row and records its outcome
// (PostgreSQL round trips and a commit, together longer than a POST to a fast receiver); more jobs than POST slots
// keep every slot busy while others read or record.
const JOBS_PER_POST = 4
const workerOpts = () => ({
  connection: createRedis(config.redisUrl, 'worker'),
  prefix: config.queuePrefix,
  maxStalledCount: STALLS_TOLERATED,
})
const workers = [
  new Worker(
    FANOUT_QUEUE,
    handBackOnCancel(
      outageTolerant(
        createFanoutProcessor({
          db,
          publicUrl: config.publicUrl,
          // The first attempts go to BullMQ right after the fan-out commits; their outbox rows are the safety net.
          direct,
          onCommit: relay.kick,
        }),
        { onOutage },
      ),
      { onHandBack },
    ),
    // Fan-outs running together share their reads and their write (see createFanoutProcessor).
    { ...workerOpts(), concurrency: FANOUT_CONCURRENCY },
  ),
  new Worker(
    DELIVERY_QUEUE,
    handBackOnCancel(
      outageTolerant(
        createDeliveryProcessor({
          db,
          // Every attempt opens its webhook's sealed secret; each sealed value is decrypted once.
          secrets: rememberOpened(secrets),
          log,
          dispatcher,
          timeoutMs: config.timeoutMs,
          connectTimeoutMs: config.connectTimeoutMs,
          retry: config.retry,
          onCommit: relay.kick,
          batching: createDeliveryBatching(db),
          inFlight: limitConcurrency(config.concurrency),
        }),
        { onOutage },
      ),
      { onHandBack },
    ),
    // A delivery can wait 30 s for a slow receiver; the lock must outlast it (BullMQ renews it while a job runs, so a
    // job of several deliveries waiting for POST slots keeps it).
    {
      ...workerOpts(),
      concurrency: config.concurrency * JOBS_PER_POST,
      lockDuration: config.timeoutMs + config.connectTimeoutMs + 10_000,
    },
  ),
]
for (const w of workers) w.on('error', (err) => log.error({ err }, 'worker error'))
log.info('webhook dispatcher started')

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  log.info(
    { signal, graceMs: config.shutdownGraceMs },
    'shutting down: no new jobs; finishing the deliveries under way',
  )
  const { graceExceeded } = await drainWorkers(workers, config.shutdownGraceMs)
  log.info({ graceExceeded }, graceExceeded ? 'grace ran out; unfinished jobs handed back' : 'jobs under way finished')
  await direct.stop()
  await relay.stop()
  await queues.close()
  await dispatcher.close()
  producer.disconnect()
  await db.$disconnect()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
