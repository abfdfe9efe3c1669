// Past one machine, black box: the three apps run against a three-master Redis Cluster (redis-server
// --cluster-enabled yes on local ports, set up by this test) through a `redis+cluster://` REDIS_URL. Jobs of both
// forms go through every stage and a webhook delivery, so every queue and BullMQ script runs on the cluster.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { startHttpsReceiver, type HttpsReceiver } from '@quire/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { freePort, startStack, type Stack } from './stack.ts'

const run = promisify(execFile)
const FINAL = ['completed', 'completed_with_errors', 'failed', 'cancelled', 'timed_out']
// post_processing has nothing to do without a configured step, so it is recorded as skipped.
const EVERY_STAGE = [
  'initialization',
  'parse',
  'split_classify',
  'extract',
  'validate',
  'post_processing',
  'destination',
]

let dir: string
let nodes: ChildProcess[] = []
let ports: number[] = []
let stack: Stack
let receiver: HttpsReceiver

async function redisCli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout
}

async function startCluster(): Promise<void> {
  dir = mkdtempSync(path.join(os.tmpdir(), 'quire-cluster-'))
  ports = [await freePort(), await freePort(), await freePort()]
  nodes = ports.map((port) =>
    spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    ),
  )
  for (const port of ports) {
    await pollUntil(
      () => redisCli(port, 'ping').catch(() => ''),
      (out) => out.trim() === 'PONG',
      10_000,
      100,
    )
  }
  await run('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ])
  for (const port of ports) {
    await pollUntil(
      () => redisCli(port, 'cluster', 'info'),
      (out) => out.includes('cluster_state:ok'),
      20_000,
      200,
    )
  }
}

beforeAll(async () => {
  await startCluster()
  receiver = await startHttpsReceiver()
  stack = await startStack({
    receiverCa: receiver.ca,
    env: { REDIS_URL: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}` },
  })
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  await receiver?.close()
  for (const node of nodes) node.kill('SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('Redis Cluster (three masters)', () => {
  it('every slot is served by one of three masters, and the queue keys share one hash tag', async () => {
    const info = await redisCli(ports[0]!, 'cluster', 'info')
    expect(info).toMatch(/cluster_known_nodes:3/)
    expect(info).toMatch(/cluster_slots_assigned:16384/)
    expect(await redisCli(ports[0]!, 'cluster', 'nodes')).toMatch(/master/)
    // The stack's queue keys all live under `{prefix}:`, so they hash to a single slot.
    const prefix = stack.env.QUIRE_QUEUE_PREFIX!
    expect(prefix).toMatch(/^\{[^}]+\}$/)
  })

  it('Form B: a job goes through every stage to completed and its webhook is delivered', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'B', { credits: 20 })
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'cluster-b', url: `${receiver.url}/b`, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'invoice.pdf', bytes: await invoicePdf() }]),
    })
    expect(submit.status).toBe(202)
    const jobId = submit.body[0].job_id as string
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}?include=stages,result`, { key }),
      (r) => FINAL.includes(r.body.status),
      120_000,
    )
    expect(done.body.status).toBe('completed')
    const ran = done.body.stages
      .filter((s: { status: string }) => s.status === 'completed' || s.status === 'skipped')
      .map((s: { stage: string }) => s.stage)
    for (const stage of EVERY_STAGE) expect(ran).toContain(stage)
    expect(done.body.result.documents[0].data.invoice_number.value).toBeTruthy()
    const delivered = await receiver.waitFor(
      (r) => r.path.endsWith('/b') && r.rawBody.toString().includes(jobId),
      30_000,
    )
    expect(JSON.parse(delivered.rawBody.toString())).toMatchObject({ event: 'job.completed' })
  }, 180_000)

  it('Form A: a job completes and its exit webhook is delivered', async () => {
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 20 })
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'cluster-a', url: `${receiver.url}/a`, auth_type: 'NONE' },
    })
    expect(hook.status).toBe(201)
    const pipeline = await call(stack.baseUrl, 'POST', '/v1/pipelines', {
      key,
      json: { name: 'cluster-a', definition: { bindings: { destination: { exit_webhook_id: hook.body.id } } } },
    })
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${pipeline.body.id}/versions/1/publish`, { key })
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('file', [{ name: 'invoice.pdf', bytes: await invoicePdf() }], { pipeline_id: pipeline.body.id }),
    })
    expect(submit.status).toBe(202)
    const jobId = submit.body.id as string
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status !== 'processing',
      120_000,
    )
    expect(done.body.status).toBe('completed')
    const traced = done.body.trace.map((t: { stage: string }) => t.stage)
    expect(traced.length).toBeGreaterThanOrEqual(5)
    await receiver.waitFor((r) => r.path.endsWith('/a') && r.rawBody.toString().includes(jobId), 30_000)
  }, 180_000)
})
