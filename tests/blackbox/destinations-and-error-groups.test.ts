// Destinations, blocked jobs and error groups, black box (DESIGN, "Processing lifecycle" and QUIRE_DESTINATIONS /
// QUIRE_ERROR_GROUP_RETRY_SCHEDULE_MS in "Configuration").
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { startHttpsReceiver, startS3Server, type HttpsReceiver, type S3TestServer } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil, publishPipeline } from './client.ts'
import { startStack, type Stack } from './stack.ts'

const BUCKET = 'quire-results'
/** Not on the server when the stack starts: the operator creates it to fix the blocked jobs. */
const LATE_BUCKET = 'created-later'
let dir: string
let s3: S3TestServer
let client: S3Client
let receiver: HttpsReceiver
let stack: Stack
const out = () => path.join(dir, 'out')
const broken = () => path.join(dir, 'broken')

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'quire-dest-'))
  s3 = await startS3Server({ buckets: [BUCKET] })
  client = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials })
  receiver = await startHttpsReceiver()
  const s3Dest = (bucket: string) => ({
    type: 's3',
    bucket,
    prefix: 'results',
    endpoint: s3.endpoint,
    region: s3.region,
    force_path_style: true,
    access_key_id: s3.credentials.accessKeyId,
    secret_access_key: s3.credentials.secretAccessKey,
  })
  stack = await startStack({
    receiverCa: receiver.ca,
    env: {
      QUIRE_DESTINATIONS: JSON.stringify({
        out: { type: 'dir', path: out() },
        broken: { type: 'dir', path: broken() },
        bucket: s3Dest(BUCKET),
        // No such bucket on the server: every write is refused.
        refusing: s3Dest('no-such-bucket'),
        late: s3Dest(LATE_BUCKET),
      }),
      QUIRE_ERROR_GROUP_RETRY_SCHEDULE_MS: '1500,1500',
      QUIRE_SWEEP_INTERVAL_MS: '500',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await receiver?.close()
  client?.destroy()
  await s3?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const publish = (key: string, definition: object) => publishPipeline(stack.baseUrl, key, 'p', definition)

const submitB = async (key: string, pipelineId: string, extra: Record<string, string> = {}) => {
  const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('files', [{ name: 'inv.pdf', bytes: await invoicePdf() }], { pipeline_id: pipelineId, ...extra }),
  })
  expect(r.status).toBe(202)
  return r.body[0].job_id as string
}
const submitA = async (key: string, pipelineId: string, extra: Record<string, string> = {}) => {
  const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('file', [{ name: 'inv.pdf', bytes: await invoicePdf() }], { pipeline_id: pipelineId, ...extra }),
  })
  expect(r.status).toBe(202)
  return r.body.id as string
}
const waitStatus = (key: string, jobId: string, done: (s: string) => boolean, timeoutMs = 60_000) =>
  pollUntil(
    () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
    (x) => done(x.body.status),
    timeoutMs,
  )

describe('destinations (QUIRE_DESTINATIONS)', () => {
  it('a pipeline definition names a destination; an unknown key is still refused', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const ok = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'd', definition: { destination: { name: 'out' } } },
    })
    expect(ok.status).toBe(201)
    const bad = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'd', definition: { destination: { name: 'out', path: '/etc' } } },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('INVALID_DEFINITION')
  })

  it('directory: <job_id>.json written once per job with the result; never for test runs (A run_kind, B environment)', async () => {
    const b = await newWorkspace(stack.baseUrl, 'B')
    const pb = await publish(b.key, { destination: { name: 'out' }, routing: { catch_all_schema_id: 'invoice' } })
    const prodB = await submitB(b.key, pb)
    const testB = await submitB(b.key, pb, { environment: 'test' })
    const a = await newWorkspace(stack.baseUrl, 'A')
    const pa = await publish(a.key, { destination: { name: 'out' } })
    const prodA = await submitA(a.key, pa)
    const testA = await submitA(a.key, pa, { run_kind: 'test' })
    for (const [key, id] of [
      [b.key, prodB],
      [b.key, testB],
      [a.key, prodA],
      [a.key, testA],
    ] as const) {
      await waitStatus(key, id, (s) => s === 'completed')
    }
    const files = readdirSync(out()).sort()
    expect(files).toEqual([`${prodA}.json`, `${prodB}.json`].sort())
    const result = JSON.parse(readFileSync(path.join(out(), `${prodB}.json`), 'utf8'))
    expect(result).toMatchObject({ job_id: prodB, pipeline: { id: pb, version: 1 }, environment: 'production' })
    expect(result.documents[0]).toMatchObject({ status: 'completed', schema_id: 'invoice' })
    expect(result.documents[0].data.invoice_number.value).toBe('INV-2026-0042')
  }, 120_000)

  it('S3-compatible bucket (s3rver): results/<job_id>.json; nothing for a test run (B environment=test)', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const p = await publish(key, { destination: { name: 'bucket' } })
    const jobId = await submitB(key, p)
    const testJobId = await submitB(key, p, { environment: 'test' })
    await waitStatus(key, jobId, (s) => s === 'completed')
    const testRun = await waitStatus(key, testJobId, (s) => s === 'completed')
    expect(testRun.body.environment).toBe('test')
    const obj = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `results/${jobId}.json` }))
    const body = JSON.parse(await obj.Body!.transformToString())
    expect(body).toMatchObject({ job_id: jobId, documents: [expect.objectContaining({ status: 'completed' })] })
    // Only the production job's object is in the bucket (no other test writes to it).
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }))
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual([`results/${jobId}.json`])
  }, 90_000)
})

describe('blocked jobs and error groups', () => {
  it('destination directory unwritable: jobs park as processing, one group opens, escalates; after the fix a rerun completes every job exactly once and the group resolves', async () => {
    // The destination's path is now a file: nothing can be written under it.
    writeFileSync(broken(), 'not a directory')
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'A', { credits: 100 })
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: {
        name: 'ops',
        url: `${receiver.origin}/groups`,
        auth_type: 'NONE',
        events: ['job.blocked', 'error_group.opened', 'error_group.escalated', 'error_group.resolved'],
      },
    })
    const pipelineId = await publish(key, {
      destination: { name: 'broken' },
      bindings: { destination: { exit_webhook_id: hook.body.id } },
    })
    const jobs = [await submitA(key, pipelineId), await submitA(key, pipelineId), await submitA(key, pipelineId)]
    // DESIGN: a blocked job is shown as processing with stage_now (Form A stage names).
    for (const id of jobs) {
      const parked = await pollUntil(
        async () => {
          const groups = await call(stack.baseUrl, 'GET', `/admin/v1/error-groups?workspace_id=${workspaceId}`, {
            admin: true,
          })
          return { job: await call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key }), groups: groups.body.data }
        },
        (x) => x.job.body.stage_now === 'destination' && x.groups.length === 1,
        60_000,
      )
      expect(parked.job.body.status).toBe('processing')
    }
    // One group for (pipeline, stage, code); retried on the short schedule, then escalated.
    const escalated = await pollUntil(
      () => call(stack.baseUrl, 'GET', '/admin/v1/error-groups?status=escalated', { admin: true }),
      // Escalated by the first job blocking again after the last retry; the others follow it back to blocked.
      (r) =>
        r.body.data.some(
          (g: { pipeline_id: string; jobs: { blocked: number } }) =>
            g.pipeline_id === pipelineId && g.jobs.blocked === 3,
        ),
      60_000,
    )
    const group = escalated.body.data.find((g: { pipeline_id: string }) => g.pipeline_id === pipelineId)
    expect(group).toMatchObject({
      workspace_id: workspaceId,
      stage: 'destination',
      error_code: 'destination_unavailable',
      status: 'escalated',
      jobs: { blocked: 3, in_group: 3, total: 3 },
      retries: { done: 2, next_at: null },
    })
    expect(group.last_error).toContain('broken')
    const open = await call(stack.baseUrl, 'GET', '/admin/v1/error-groups?status=open', { admin: true })
    expect(open.body.data.some((g: { id: string }) => g.id === group.id)).toBe(false)
    const notes = await call(stack.baseUrl, 'GET', `/admin/v1/workspaces/${workspaceId}/notifications`, { admin: true })
    expect(notes.body.data).toContainEqual(
      expect.objectContaining({
        kind: 'error_group_escalated',
        data: expect.objectContaining({ error_group_id: group.id }),
      }),
    )
    // The holds stay reserved while blocked (1 page each).
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({ reserved: 3, spent: 0 })
    // A fourth job joins the group; cancelling it releases its hold.
    const fourth = await submitA(key, pipelineId)
    await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${group.id}`, { admin: true }),
      (r) => r.body.jobs.blocked === 4,
      60_000,
    )
    const cancelled = await call(stack.baseUrl, 'POST', `/v1/jobs/${fourth}/cancel`, { key })
    expect(cancelled.body.status).toBe('cancelled')
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({ reserved: 3, spent: 0 })

    // The operator fixes the destination and re-runs the group.
    rmSync(broken(), { force: true })
    const rerun = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    expect(rerun.status).toBe(200)
    expect(rerun.body.requeued).toBe(3)
    for (const id of jobs) await waitStatus(key, id, (s) => s === 'completed')
    const resolved = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${group.id}`, { admin: true }),
      (r) => r.body.status === 'resolved',
      30_000,
    )
    expect(resolved.body.jobs).toMatchObject({ blocked: 0, in_group: 0, total: 4 })
    expect(readdirSync(broken()).sort()).toEqual(jobs.map((j) => `${j}.json`).sort())
    expect(existsSync(path.join(broken(), `${fourth}.json`))).toBe(false)
    const again = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    expect(again.status).toBe(409)

    // Exactly once: one destination.exited per job, one settlement per job.
    const bodies = () =>
      receiver.received.filter((r) => r.path === '/groups').map((r) => JSON.parse(r.rawBody.toString()))
    await pollUntil(
      async () => bodies(),
      (b) =>
        b.some((x) => x.type === 'error_group.resolved') &&
        b.filter((x) => x.type === 'destination.exited').length >= 3,
      30_000,
    )
    await new Promise((r) => setTimeout(r, 1000))
    const types = bodies().map((b) => b.type)
    expect(types.filter((t) => t === 'error_group.opened')).toHaveLength(1)
    expect(types.filter((t) => t === 'error_group.escalated')).toHaveLength(1)
    expect(types.filter((t) => t === 'error_group.resolved')).toHaveLength(1)
    expect(types.filter((t) => t === 'job.blocked')).toHaveLength(4)
    for (const id of jobs) {
      expect(bodies().filter((b) => b.type === 'destination.exited' && b.job_id === id)).toHaveLength(1)
      const ledger = await call(stack.baseUrl, 'GET', `/v1/credits/ledger?job_id=${id}`, { key })
      expect(ledger.body.data.filter((e: { kind: string }) => e.kind === 'settle')).toHaveLength(1)
    }
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({
      available: 97,
      reserved: 0,
      spent: 3,
    })
  }, 240_000)

  it('Form B, a bucket refusing writes: the job parks as processing at destination; cancel releases it and resolves the group', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 10 })
    const p = await publish(key, { destination: { name: 'refusing' } })
    const jobId = await submitB(key, p)
    const parked = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (x) => x.body.stage_now === 'destination' && x.body.completed_at === null,
      60_000,
    )
    await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups?workspace_id=${workspaceId}`, { admin: true }),
      (r) => r.body.data[0]?.jobs.blocked === 1,
      30_000,
    )
    expect((await call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key })).body.status).toBe('processing')
    expect(parked.body.error).toBeUndefined()
    const groups = await call(stack.baseUrl, 'GET', `/admin/v1/error-groups?workspace_id=${workspaceId}`, {
      admin: true,
    })
    expect(groups.body.data[0]).toMatchObject({ error_code: 'destination_unavailable', stage: 'destination' })
    expect(groups.body.data[0].last_error).toContain('no-such-bucket')
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({ reserved: 1 })
    await call(stack.baseUrl, 'POST', `/v1/jobs/${jobId}/cancel`, { key })
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({
      available: 10,
      reserved: 0,
      spent: 0,
    })
    const after = await call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${groups.body.data[0].id}`, { admin: true })
    expect(after.body.status).toBe('resolved')
  }, 120_000)

  it('Form B, a bucket that does not exist: jobs park, the group escalates; the operator creates the bucket and re-runs, each job completes exactly once and the group resolves', async () => {
    const { key, workspaceId } = await newWorkspace(stack.baseUrl, 'B', { credits: 10 })
    await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'late', url: `${receiver.origin}/late`, events: ['job.completed'] },
    })
    const p = await publish(key, { destination: { name: 'late' } })
    const jobs = [await submitB(key, p), await submitB(key, p)]
    // Retries run out (two on the 1.5 s schedule): only the operator's re-run can take the jobs on now.
    const escalated = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups?workspace_id=${workspaceId}`, { admin: true }),
      (r) => r.body.data[0]?.status === 'escalated' && r.body.data[0]?.jobs.blocked === 2,
      60_000,
    )
    const group = escalated.body.data[0]
    expect(group).toMatchObject({ stage: 'destination', error_code: 'destination_unavailable' })
    expect(group.last_error).toContain(LATE_BUCKET)
    for (const id of jobs) {
      const parked = await call(stack.baseUrl, 'GET', `/v1/jobs/${id}`, { key })
      expect(parked.body).toMatchObject({ status: 'processing', stage_now: 'destination', completed_at: null })
    }
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({ reserved: 2, spent: 0 })

    // The fix: the bucket exists now. Then the re-run.
    await client.send(new CreateBucketCommand({ Bucket: LATE_BUCKET }))
    const rerun = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    expect(rerun.status).toBe(200)
    expect(rerun.body.requeued).toBe(2)
    for (const id of jobs) await waitStatus(key, id, (s) => s === 'completed')
    const resolved = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/admin/v1/error-groups/${group.id}`, { admin: true }),
      (r) => r.body.status === 'resolved',
      30_000,
    )
    expect(resolved.body.jobs).toMatchObject({ blocked: 0, in_group: 0, total: 2 })
    const listed = await client.send(new ListObjectsV2Command({ Bucket: LATE_BUCKET }))
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(jobs.map((j) => `results/${j}.json`).sort())
    for (const id of jobs) {
      const obj = await client.send(new GetObjectCommand({ Bucket: LATE_BUCKET, Key: `results/${id}.json` }))
      expect(JSON.parse(await obj.Body!.transformToString())).toMatchObject({ job_id: id })
    }

    // Exactly once: one job.completed and one settlement per job; a second re-run finds nothing to do.
    const completed = () =>
      receiver.received
        .filter((r) => r.path === '/late')
        .map((r) => JSON.parse(r.rawBody.toString()))
        .filter((b) => b.event === 'job.completed')
    await pollUntil(
      async () => completed(),
      (c) => c.length >= 2,
      30_000,
    )
    await new Promise((r) => setTimeout(r, 1000))
    for (const id of jobs) {
      expect(completed().filter((b) => b.data.job_id === id)).toHaveLength(1)
      const ledger = await call(stack.baseUrl, 'GET', `/v1/credits/ledger?job_id=${id}`, { key })
      expect(ledger.body.data.filter((e: { kind: string }) => e.kind === 'settle')).toHaveLength(1)
    }
    expect((await call(stack.baseUrl, 'GET', '/v1/credits', { key })).body).toMatchObject({
      available: 8,
      reserved: 0,
      spent: 2,
    })
    const again = await call(stack.baseUrl, 'POST', `/admin/v1/error-groups/${group.id}/rerun`, { admin: true })
    expect(again.status).toBe(409)
  }, 150_000)
})
