// The queue dashboard in a real browser, as an operator uses it (DESIGN: "The queue dashboard at /admin/queues shows
// every queue in plain words in a browser; a missing asset is 404"): headless Chromium (Debian's `chromium`, driven by
// playwright-core) signs in with the admin token, sees every queue by its plain name with its counts, opens a failed
// job and retries it.
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from './browser.ts'
import { ADMIN_TOKEN, startStack, type Stack } from './stack.ts'

const PLAIN_NAMES = [
  'Initialization stage',
  'Parse stage',
  'Split and classify stage',
  'Extract stage',
  'Validate stage',
  'Post processing stage',
  'Destination stage',
  'Webhook fan-out (events to deliveries)',
  'Webhook deliveries',
]

let stack: Stack
let browser: Browser
let redis: Redis
let deliveries: Queue
let failedJobId: string

beforeAll(async () => {
  browser = await launchChromium()
  stack = await startStack()
  redis = new Redis(stack.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null })
  deliveries = new Queue('webhook-delivery', { connection: redis, prefix: stack.env.QUIRE_QUEUE_PREFIX })
  // A delivery job whose payload breaks the catalog schema: the dispatcher fails it for good.
  const job = await deliveries.add('deliver', { deliveryId: 42, attempt: 'one' }, { attempts: 1 })
  failedJobId = job.id!
  const deadline = Date.now() + 60_000
  while ((await job.getState()) !== 'failed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
  expect(await job.getState()).toBe('failed')
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await deliveries?.close()
  redis?.disconnect()
  await stack?.stop()
})

describe('queue dashboard in a browser', () => {
  it('asks for credentials, and signs in with the admin token as the password', async () => {
    const denied = await fetch(`${stack.baseUrl}/admin/queues`)
    expect(denied.status).toBe(401)
    expect(denied.headers.get('www-authenticate')).toMatch(/^Basic /)
    const ctx = await browser.newContext({ httpCredentials: { username: 'operator', password: ADMIN_TOKEN } })
    const page = await ctx.newPage()
    const res = await page.goto(`${stack.baseUrl}/admin/queues`)
    expect(res?.status()).toBe(200)
    await ctx.close()
  })

  it('lists every queue by its plain name, with its counts', async () => {
    const ctx = await browser.newContext({ httpCredentials: { username: 'operator', password: ADMIN_TOKEN } })
    const page = await ctx.newPage()
    await page.goto(`${stack.baseUrl}/admin/queues`)
    for (const name of PLAIN_NAMES) await page.getByText(name, { exact: true }).first().waitFor({ state: 'visible' })
    // The deliveries card shows its one failed job in words.
    const card = page
      .locator('a, div')
      .filter({ hasText: 'Webhook deliveries' })
      .filter({ hasText: /failed/i })
    await card.first().waitFor({ state: 'visible' })
    await ctx.close()
  })

  it('opens the failed job, shows why it failed, and retries it', async () => {
    const ctx = await browser.newContext({ httpCredentials: { username: 'operator', password: ADMIN_TOKEN } })
    const page = await ctx.newPage()
    await page.goto(`${stack.baseUrl}/admin/queues/queue/webhook-delivery?status=failed`)
    await page.getByText(`#${failedJobId}`).first().waitFor({ state: 'visible' })
    const before = await deliveries.getJob(failedJobId)
    // Why it failed, as the worker recorded it.
    const reason = (before?.failedReason ?? '').split('\n')[0]!.slice(0, 40)
    expect(reason).not.toBe('')
    await page.getByText(reason, { exact: false }).first().waitFor({ state: 'visible' })
    const attemptsBefore = before?.attemptsStarted ?? before?.attemptsMade ?? 0
    await page.getByRole('button', { name: /retry/i }).first().click()
    const confirm = page.getByRole('button', { name: /^(retry|confirm|yes)/i })
    if (await confirm.count()) await confirm.last().click()
    const deadline = Date.now() + 30_000
    let after = await deliveries.getJob(failedJobId)
    while ((after?.attemptsStarted ?? after?.attemptsMade ?? 0) <= attemptsBefore && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250))
      after = await deliveries.getJob(failedJobId)
    }
    // The dispatcher ran it again (and, its payload still broken, failed it again).
    expect(after?.attemptsStarted ?? after?.attemptsMade ?? 0).toBeGreaterThan(attemptsBefore)
    await ctx.close()
  })

  it('a missing dashboard asset is 404, not a server error', async () => {
    const auth = `Basic ${Buffer.from(`operator:${ADMIN_TOKEN}`).toString('base64')}`
    const missing = await fetch(`${stack.baseUrl}/admin/queues/static/js/no-such-file.js`, {
      headers: { Authorization: auth },
    })
    expect(missing.status).toBe(404)
    const present = await fetch(`${stack.baseUrl}/admin/queues/static/favicon.ico`, {
      headers: { Authorization: auth },
    })
    expect(present.status).toBe(200)
    // A page bull-board has no route for (found by `npm run chaos`): 404, not its own 500.
    for (const [method, path] of [
      ['GET', '/admin/queues/nope'],
      ['HEAD', '/admin/queues/nope'],
      ['POST', '/admin/queues/nope'],
      ['POST', '/admin/queues'],
      ['PUT', '/admin/queues'],
    ] as const) {
      const page = await fetch(`${stack.baseUrl}${path}`, { method, headers: { Authorization: auth } })
      expect(page.status, `${method} ${path}`).toBe(404)
    }
  })
})
