// A reference for the submit scenario, not its baseline: the bare app (bench/baselines/bare-submit.ts) with its
// INSERT and UPDATE replaced by Quire's own domain calls: the API key's check (authenticateApiKey, one statement on
// every request, never cached so that a revocation holds on the next request), resolvePipeline, intakeFile,
// createJob and the direct dispatch of the first stage. None of the API around them: no routing, parameter
// validation, contract check, presenter, logging or metrics. Measured beside the two sides, it splits Quire's
// distance from the bare app into what a submission's guarantees cost (the key and the job's rows and files: the
// bare app against this one) and what the HTTP framework costs (this one against the API).
// Env: DATABASE_URL, REDIS_URL, BENCH_PORT, BENCH_UPLOAD_DIR, QUIRE_QUEUE_PREFIX. Requests carry X-API-Key.
import path from 'node:path'
import { authenticateApiKey, createJob, intakeFile, resolvePipeline } from '@quire/core'
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

serveUploadApp({
  uploadDir,
  // As the API: the key before the body is read.
  authorize: (ctx) => authenticateApiKey({ db, key: ctx.get('X-API-Key') }),
  async handle(ctx, file, caller) {
    const principal = caller! // authorize let the request through
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
