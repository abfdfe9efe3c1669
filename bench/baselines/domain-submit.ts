// A reference for the submit scenario, not its baseline: the bare app (bench/baselines/bare-submit.ts) with its
// INSERT and UPDATE replaced by Quire's own domain calls, as the API makes them: the API key's principal (read once,
// then kept as the API keeps it, RecentPrincipals, and confirmed by each submission's statement), resolvePipeline,
// intakeFile, createJob and the direct dispatch of the first stage. None of the API around them: no routing, parameter
// validation, contract check, presenter, logging or metrics. Measured beside the two sides, it splits Quire's
// distance from the bare app into what a submission's guarantees cost (the key and the job's rows and files: the
// bare app against this one) and what the HTTP framework costs (this one against the API).
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX. Requests carry X-API-Key.
import path from 'node:path'
import { authenticateApiKey, createJob, intakeFile, RecentPrincipals, resolvePipeline } from '@quire/core'
import { createPrisma } from '@quire/db'
import { FILE_TYPES } from '@quire/domain'
import { createQueueSet, createRedis, startDirectDispatch } from '@quire/queues'
import { createBlobStore } from '@quire/storage'
import { serveUploadApp } from '../lib/upload-app.ts'

const uploadDir = process.env.BENCH_UPLOAD_DIR!
const db = createPrisma(process.env.DATABASE_URL!)
const blobs = createBlobStore({ type: 'fs', dir: path.join(uploadDir, 'blobs') })
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer')
const queues = createQueueSet({ connection: redis, prefix: process.env.QUIRE_QUEUE_PREFIX! })
const direct = startDirectDispatch({ db, queues, kickRelay: () => {} })

const recent = new RecentPrincipals({ maxAgeMs: 60_000, maxKeys: 10_000 })

serveUploadApp({
  uploadDir,
  // As the API: the key before the body is read, from the principals read lately when it is there (the bench never
  // changes the key, so the API's serving again after a PrincipalChanged is left out).
  async authorize(ctx) {
    const key = ctx.get('X-API-Key')
    const kept = recent.get(key)
    if (kept) return { principal: kept, confirmKey: kept.asRead }
    const principal = await authenticateApiKey({ db, key })
    if (!principal) return null
    recent.remember(principal)
    return { principal, confirmKey: null }
  },
  async handle(ctx, file, caller) {
    const { principal, confirmKey } = caller! // authorize let the request through
    const { workspaceId } = principal
    const pipeline = await resolvePipeline({
      db,
      workspaceId,
      boundPipelineId: principal.boundPipelineId,
      workspaceDefaultPipelineId: principal.workspaceDefaultPipelineId,
      defaultRun: principal.defaultRun,
      allowDraftVersion: true,
    })
    const inspected = await intakeFile({
      db,
      workspaceId,
      file: { tempPath: file.filepath, fileName: file.originalFilename ?? 'upload', sizeBytes: file.size },
      definition: pipeline.definition,
      formTypes: FILE_TYPES,
    })
    const created = await createJob({
      db,
      blobs,
      workspaceId,
      pipeline,
      files: [inspected],
      options: { priority: 'standard', executionMode: 'async', environment: 'production' },
      confirmKey,
    })
    direct.send(created.dispatch)
    ctx.status = 202
    ctx.body = { job_id: created.jobId, status: 'queued', pages: inspected.pageCount }
  },
  async close() {
    await direct.stop()
    await queues.close()
    redis.disconnect()
    await db.$disconnect()
  },
})
