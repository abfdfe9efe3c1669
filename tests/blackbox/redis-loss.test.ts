// DESIGN: "Redis holds only queue state that can be rebuilt from PostgreSQL." Black box: the stack's Redis data is
// wiped while work is queued; the stage workers' sweep rebuilds it and nothing is lost.
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ctx = useStackWithReceiver({ env: { QUIRE_REQUEUE_AFTER_MS: '2000', QUIRE_SWEEP_INTERVAL_MS: '500' } })

async function wipeQueues(prefix: string) {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const keys = await redis.keys(`${prefix}:*`)
  if (keys.length) await redis.del(...keys)
  const left = await redis.keys(`${prefix}:*`)
  redis.disconnect()
  return { deleted: keys.length, left: left.length }
}

describe('Redis loses its data', () => {
  it('queued stages and an unsent webhook are rebuilt from PostgreSQL; the job completes and the webhook arrives', async () => {
    const { stack, receiver } = ctx
    const { key } = await newWorkspace(stack.baseUrl, 'B')
    const hook = await call(stack.baseUrl, 'POST', '/v1/webhooks', {
      key,
      json: { name: 'loss', url: receiver.url, events: ['job.completed'] },
    })
    expect(hook.status).toBe(201)

    // 1. A job is queued while no stage worker runs; then Redis forgets it.
    await stack.kill('stage-worker')
    const submit = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm('files', [{ name: 'a.pdf', bytes: await invoicePdf() }]),
    })
    const jobId = submit.body[0].job_id as string
    await new Promise((r) => setTimeout(r, 1000))
    const wiped = await wipeQueues(stack.env.QUIRE_QUEUE_PREFIX!)
    expect(wiped.deleted).toBeGreaterThan(0)

    // 2. The dispatcher is down when the job finishes; Redis forgets the fan-out too.
    await stack.kill('webhook-dispatcher')
    await stack.start('stage-worker')
    const done = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/v1/jobs/${jobId}`, { key }),
      (r) => r.body.status === 'completed',
      90_000,
    )
    expect(done.body.status).toBe('completed')
    await wipeQueues(stack.env.QUIRE_QUEUE_PREFIX!)
    await stack.start('webhook-dispatcher')

    const delivery = await receiver.waitFor((r) => r.rawBody.toString().includes(jobId), 60_000)
    expect(JSON.parse(delivery.rawBody.toString())).toMatchObject({
      event: 'job.completed',
      data: { job_id: jobId, status: 'completed' },
    })
  }, 240_000)
})
