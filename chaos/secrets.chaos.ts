// Secrets grep: webhooks of both forms with signing secrets, API-key and basic credentials (one secret rotated, one
// webhook pointing at a receiver that refuses, one at a closed port, so failures are logged too), jobs delivered to
// them with every app logging at debug level. None of the secrets, credentials, workspace API keys, the admin token
// or QUIRE_SECRETS_KEY may appear in clear in any PostgreSQL table, in Redis (queue data), in any app's log, or in
// what the API answers about the webhooks and their deliveries.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { checkInvariants } from './lib/invariants.ts'
import { scenario } from './lib/report.ts'
import { ADMIN_TOKEN, startChaosStack } from './lib/stack.ts'
import { apiCall, invoices, newWorkspace, submitJobs, waitAllFinal } from './lib/workload.ts'

const token = (label: string) => `${label}-${randomBytes(12).toString('base64url')}`

await scenario('secrets grep', async (ctx) => {
  const stack = await startChaosStack('secrets', {
    env: { QUIRE_LOG_LEVEL: 'debug' },
    receiver: { respond: (r) => ({ status: r.path.startsWith('/refuse') ? 401 : 200 }) },
  })
  ctx.stacks.push(stack)
  const origin = stack.receiver!.origin
  const a = await newWorkspace(stack.baseUrl, 'A')
  const b = await newWorkspace(stack.baseUrl, 'B')
  const needles: string[] = [a.key, b.key, ADMIN_TOKEN, stack.env.QUIRE_SECRETS_KEY!]
  const basic = (user: string, pw: string) => Buffer.from(`${user}:${pw}`).toString('base64')
  const hookIds: { ws: typeof a; id: string }[] = []
  const create = async (ws: typeof a, body: Record<string, unknown>) => {
    const res = await apiCall(stack.baseUrl, 'POST', '/v1/webhooks', ws.key, body)
    if (res.status !== 201) throw new Error(`webhook: ${res.status} ${res.text}`)
    needles.push(res.body.hmac_secret ?? res.body.secret)
    hookIds.push({ ws, id: res.body.id })
    return res.body.id as string
  }
  // Form A: one pipeline binding three webhooks (api key, basic, refusing receiver) to the destination stage.
  const aKey = token('a-apikey')
  const aPass = token('a-pass')
  const aRefusePass = token('a-refuse')
  needles.push(aKey, aPass, aRefusePass, basic('alice', aPass), basic('alice', aRefusePass))
  const aHooks = [
    await create(a, {
      name: 'a-key',
      url: `${origin}/a-key`,
      auth_type: 'API_KEY',
      auth: { api_key: aKey, header_name: 'X-Receiver-Key' },
    }),
    await create(a, {
      name: 'a-basic',
      url: `${origin}/a-basic`,
      auth_type: 'BASIC',
      auth: { username: 'alice', password: aPass },
    }),
    await create(a, {
      name: 'a-refuse',
      url: `${origin}/refuse-a`,
      auth_type: 'BASIC',
      auth: { username: 'alice', password: aRefusePass },
    }),
  ]
  const bindings = {
    initialization: { entry_webhook_id: aHooks[0] },
    destination: { entry_webhook_id: aHooks[1], exit_webhook_id: aHooks[2] },
  }
  const pipe = await apiCall(stack.baseUrl, 'POST', '/v1/pipelines', a.key, {
    name: 'secrets',
    definition: { bindings },
  })
  await apiCall(stack.baseUrl, 'POST', `/v1/pipelines/${pipe.body.id}/versions/1/publish`, a.key)
  a.pipelineId = pipe.body.id
  // Form B: api key, basic (then rotated), a refusing receiver and a closed port.
  const bKey = token('b-apikey')
  const bPass = token('b-pass')
  const bClosedPass = token('b-closed')
  needles.push(bKey, bPass, bClosedPass, basic('bob', bPass), basic('bob', bClosedPass))
  await create(b, {
    name: 'b-key',
    url: `${origin}/b-key`,
    events: ['job.completed'],
    auth: 'apikey',
    apikey: { location: 'header', name: 'X-Api-Key', key: bKey },
  })
  const bBasic = await create(b, {
    name: 'b-basic',
    url: `${origin}/b-basic`,
    events: ['job.completed'],
    auth: 'basic',
    basic: { username: 'bob', password: bPass },
  })
  await create(b, { name: 'b-refuse', url: `${origin}/refuse-b`, events: ['job.completed'] })
  await create(b, {
    name: 'b-closed',
    url: 'https://127.0.0.1:9/closed',
    events: ['job.completed'],
    auth: 'basic',
    basic: { username: 'bob', password: bClosedPass },
  })
  const rotated = await apiCall(stack.baseUrl, 'POST', `/v1/webhooks/${bBasic}/rotate`, b.key)
  needles.push(rotated.body.secret)

  const files = await invoices(4)
  const submitted = [await submitJobs(stack, a, files.slice(0, 2)), await submitJobs(stack, b, files.slice(2))]
  await waitAllFinal(stack, 180_000)
  // Let the failing deliveries retry a few times (short schedules), so their errors are logged.
  await new Promise((r) => setTimeout(r, 8000))

  // What the API answers about webhooks and deliveries.
  const answers: string[] = []
  for (const { ws, id } of hookIds) {
    answers.push((await apiCall(stack.baseUrl, 'GET', `/v1/webhooks/${id}`, ws.key)).text)
    answers.push((await apiCall(stack.baseUrl, 'GET', `/v1/webhooks/${id}/deliveries`, ws.key)).text)
  }
  for (const ws of [a, b]) answers.push((await apiCall(stack.baseUrl, 'GET', '/v1/webhooks', ws.key)).text)
  const inAnswers = needles.filter((n) => answers.some((t) => t.includes(n)))
  ctx.check(
    'no secret in API answers about webhooks and deliveries',
    inAnswers.length === 0,
    inAnswers.length ? inAnswers.map((n) => `${n.slice(0, 10)}…`).join(', ') : `${answers.length} answers`,
  )

  // Redis: every value of every key (queue jobs carry ids only).
  const redis = new Redis(stack.redis.url)
  const values: string[] = []
  for (const key of await redis.keys('*')) {
    const type = await redis.type(key)
    if (type === 'string') values.push((await redis.get(key)) ?? '')
    else if (type === 'hash') values.push(JSON.stringify(await redis.hgetall(key)))
    else if (type === 'list') values.push(...(await redis.lrange(key, '0', '-1')))
    else if (type === 'set') values.push(...(await redis.smembers(key)))
    else if (type === 'zset') values.push(...(await redis.zrange(key, '0', '-1')))
    else if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')))
  }
  redis.disconnect()
  const inRedis = needles.filter((n) => values.some((v) => v.includes(n)))
  ctx.check(
    'no secret in clear in Redis',
    inRedis.length === 0,
    inRedis.length ? inRedis.map((n) => `${n.slice(0, 10)}…`).join(', ') : `${values.length} values`,
  )
  const received = stack.receiver!.received
  ctx.check(
    'deliveries carried their credentials',
    received.some((r) => r.headers['x-receiver-key'] === aKey) &&
      received.some((r) => r.headers.authorization === `Basic ${basic('bob', bPass)}`),
    `${received.length} requests received`,
  )
  ctx.detail.push(`${needles.length} secrets searched; ${stack.logText().length} log bytes at debug level`)
  await checkInvariants(ctx, stack, { mustComplete: submitted.flatMap((s) => s.jobIds), secrets: needles })
})
