import { createPageRenderer, ensurePlatformPipelines } from '@quire/core'
import { createPrisma } from '@quire/db'
import { createQueueSet, createRedis, startDirectDispatch, startOutboxRelay, watchRedisDown } from '@quire/queues'
import { createBlobStore } from '@quire/storage'
import { guardProcess } from '@quire/runtime'
import pino from 'pino'
import { openProcessSecretBox, SECRET_LOG_REDACT_PATHS } from '@quire/secrets'
import { createApp } from './app.ts'
import { config } from './config.ts'
import { queueDashboard } from './dashboard.ts'
import { reviewDesk } from './review-desk.ts'
import { throttleKicks } from './relay-kick.ts'
import { startUploadSweep } from './http/upload-sweep.ts'
import { answerClientErrors } from './http/client-error.ts'

const log = pino({
  name: 'quire-api',
  level: config.logLevel,
  redact: { paths: SECRET_LOG_REDACT_PATHS, censor: '[redacted]' },
})
guardProcess(log)
const secrets = openProcessSecretBox(config.secrets, log)
const db = createPrisma(config.databaseUrl)
const redis = createRedis(config.redisUrl, 'producer')
const redisDown = watchRedisDown(redis)
const queues = createQueueSet({ connection: redis, prefix: config.queuePrefix, stageAttempts: config.stageAttempts })
const relay = startOutboxRelay({
  db,
  queues,
  retentionMs: config.outboxRetentionMs,
  onError: (err) => log.warn({ err }, 'outbox relay pass failed; will retry'),
})
const relayKick = throttleKicks(relay.kick)
const direct = startDirectDispatch({
  db,
  queues,
  kickRelay: relayKick.kick,
  onError: (err) => log.warn({ err }, 'direct dispatch failed; the relay sends the rows'),
})

await ensurePlatformPipelines(db)
const pages = createPageRenderer()
const uploadSweep = startUploadSweep({ dir: config.uploadDir, olderThanMs: config.uploadStaleMs, log })

const app = createApp(
  {
    db,
    blobs: createBlobStore(config.blobStore),
    pages,
    secrets,
    config,
    log,
    kickRelay: relayKick.kick,
    dispatchOutbox: direct.send,
    pingRedis: () => redis.ping(),
    redisDown,
  },
  [queueDashboard({ queues, adminToken: config.adminToken, log }), reviewDesk()],
)
const server = app.listen(config.port, config.host, () => {
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : config.port
  log.info({ port }, `Quire API listening on http://127.0.0.1:${port}`)
})
answerClientErrors(server, log)

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  log.info(
    { signal, graceMs: config.shutdownGraceMs },
    'shutting down: no new connections; finishing requests under way',
  )
  // Stop accepting, let requests under way finish (idle keep-alive connections close at once); after the grace,
  // whatever is left is cut.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  let timer: NodeJS.Timeout | undefined
  const graceOver = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), config.shutdownGraceMs)
  })
  const graceExceeded = await Promise.race([closed.then(() => false), graceOver])
  clearTimeout(timer)
  if (graceExceeded) {
    log.warn('shutdown grace ran out; closing the connections left')
    server.closeAllConnections()
  }
  uploadSweep.stop()
  await pages.close()
  await direct.stop()
  relayKick.flush()
  await relay.stop()
  await queues.close()
  redis.disconnect()
  await db.$disconnect()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
