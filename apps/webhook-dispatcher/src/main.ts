import { createPrisma } from '@quire/db'
import { createQueueSet, createRedis, DELIVERY_QUEUE, FANOUT_QUEUE, startOutboxRelay } from '@quire/queues'
import { createGuardedDispatcher } from '@quire/webhooks'
import { Worker } from 'bullmq'
import { guardProcess } from '@quire/runtime'
import pino from 'pino'
import { openProcessSecretBox, SECRET_LOG_REDACT_PATHS } from '@quire/secrets'
import { config } from './config.ts'
import { createDeliveryProcessor } from './processors/deliver-webhook.processor.ts'
import { createFanoutProcessor } from './processors/fanout.processor.ts'

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
  onError: (err) => log.warn({ err }, 'outbox relay pass failed; will retry'),
})
const dispatcher = createGuardedDispatcher({
  allowPrivate: config.allowPrivate,
  connectTimeoutMs: config.connectTimeoutMs,
  ca: config.ca,
})

const workerOpts = () => ({ connection: createRedis(config.redisUrl, 'worker'), prefix: config.queuePrefix })
const workers = [
  new Worker(FANOUT_QUEUE, createFanoutProcessor({ db, publicUrl: config.publicUrl, onCommit: relay.kick }), {
    ...workerOpts(),
    concurrency: 5,
  }),
  new Worker(
    DELIVERY_QUEUE,
    createDeliveryProcessor({
      db,
      secrets,
      log,
      dispatcher,
      timeoutMs: config.timeoutMs,
      connectTimeoutMs: config.connectTimeoutMs,
      retry: config.retry,
      onCommit: relay.kick,
    }),
    // A delivery can wait 30 s for a slow receiver; the lock must outlast it.
    {
      ...workerOpts(),
      concurrency: config.concurrency,
      lockDuration: config.timeoutMs + config.connectTimeoutMs + 10_000,
    },
  ),
]
for (const w of workers) w.on('error', (err) => log.error({ err }, 'worker error'))
log.info('webhook dispatcher started')

async function shutdown(signal: string) {
  log.info({ signal }, 'shutting down')
  await Promise.all(workers.map((w) => w.close()))
  await relay.stop()
  await queues.close()
  await dispatcher.close()
  producer.disconnect()
  await db.$disconnect()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
