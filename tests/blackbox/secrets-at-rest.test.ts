// Secrets at rest, black box: webhooks of both forms with api-key and basic credentials created through the real API;
// the stack's database (every table, read directly) and the apps' logs hold none of the secrets in clear, deliveries
// still arrive signed with the right secret and carrying the right credential; a plaintext row from before encryption
// still delivers, and `npm run secrets:rotate` re-seals everything under a new key so the old one can be retired.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { ReceivedRequest } from '@quire/testing'
import { verifyFormA, verifyFormB } from '@quire/signing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invoicePdf } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace, pollUntil } from './client.ts'
import { useStackWithReceiver } from './stack.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
// Debug level, so every line the apps can log is in the logs this test searches.
const ctx = useStackWithReceiver({ env: { QUIRE_LOG_LEVEL: 'debug' } })
let db: pg.Client
beforeAll(async () => {
  db = new pg.Client({ connectionString: ctx.stack.env.DATABASE_URL })
  await db.connect()
}, 120_000)
afterAll(async () => {
  await db?.end()
})

const token = (label: string) => `${label}-${randomBytes(9).toString('base64url')}`
const header = (r: ReceivedRequest, name: string) => {
  const v = r.headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

/** Every row of every table in the stack's database, as text. */
async function wholeDatabase(): Promise<string> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  )
  const parts: string[] = []
  for (const { table_name } of tables.rows) {
    const rows = await db.query(`SELECT t::text AS row FROM "${table_name}" t`)
    parts.push(...rows.rows.map((r) => r.row as string))
  }
  return parts.join('\n')
}
const allLogs = () => Object.values(ctx.stack.logs).flat().join('')

async function deliveredTo(hookPath: string, jobId: string) {
  const hits = await pollUntil(
    async () => ctx.receiver.received.filter((r) => r.path.endsWith(hookPath) && r.rawBody.toString().includes(jobId)),
    (list) => list.length >= 1,
    90_000,
  )
  expect(hits.length, `delivery to ${hookPath}`).toBeGreaterThanOrEqual(1)
  return hits[0]!
}

async function formBJob(key: string) {
  const job = await call(ctx.stack.baseUrl, 'POST', '/v1/jobs', {
    key,
    form: fileForm('files', [{ name: 'b.pdf', bytes: await invoicePdf() }]),
  })
  expect(job.status).toBe(202)
  return job.body[0].job_id as string
}

function verifiesB(secret: string, r: ReceivedRequest) {
  return verifyFormB({
    secret,
    rawBody: r.rawBody,
    signature: header(r, 'X-Service-Signature'),
    timestamp: header(r, 'X-Service-Timestamp'),
  }).ok
}

// Values the test must never find in clear in the database or the logs.
const needles: string[] = []
let formB: { key: string; keyHook: { id: string; secret: string; apiKey: string } } | undefined

describe('secrets at rest', () => {
  it('Form A and B webhooks with api-key and basic auth: sealed in PostgreSQL, absent from logs, deliveries signed and authenticated', async () => {
    const base = ctx.stack.baseUrl
    const url = (p: string) => `${ctx.receiver.url}${p}`
    // Form A: one pipeline per webhook (its exit webhook), one job each.
    const a = await newWorkspace(base, 'A')
    const aKey = token('a-api-key')
    const aPass = token('a-password')
    const aKeyHook = await call(base, 'POST', '/v1/webhooks', {
      key: a.key,
      json: {
        name: 'a-key',
        url: url('/a-key'),
        auth_type: 'API_KEY',
        auth: { api_key: aKey, header_name: 'X-Receiver-Key' },
      },
    })
    const aBasicHook = await call(base, 'POST', '/v1/webhooks', {
      key: a.key,
      json: { name: 'a-basic', url: url('/a-basic'), auth_type: 'BASIC', auth: { username: 'alice', password: aPass } },
    })
    expect([aKeyHook.status, aBasicHook.status]).toEqual([201, 201])
    // Form B: both webhooks receive the same job's job.completed.
    const b = await newWorkspace(base, 'B')
    const bKey = token('b-api-key')
    const bPass = token('b-password')
    const bKeyHook = await call(base, 'POST', '/v1/webhooks', {
      key: b.key,
      json: {
        name: 'b-key',
        url: url('/b-key'),
        events: ['job.completed'],
        auth: 'apikey',
        apikey: { location: 'header', name: 'X-Api-Key', key: bKey },
      },
    })
    const bBasicHook = await call(base, 'POST', '/v1/webhooks', {
      key: b.key,
      json: {
        name: 'b-basic',
        url: url('/b-basic'),
        events: ['job.completed'],
        auth: 'basic',
        basic: { username: 'bob', password: bPass },
      },
    })
    expect([bKeyHook.status, bBasicHook.status]).toEqual([201, 201])
    // A rotated secret is sealed too; the one it replaced is gone.
    const firstBasicSecret = bBasicHook.body.secret as string
    const rotated = await call(base, 'POST', `/v1/webhooks/${bBasicHook.body.id}/rotate`, { key: b.key })
    expect(rotated.status).toBe(200)
    const bBasicSecret = rotated.body.secret as string
    expect(bBasicSecret).not.toBe(firstBasicSecret)
    const secrets = [aKeyHook.body.hmac_secret, aBasicHook.body.hmac_secret, bKeyHook.body.secret, bBasicSecret]
    for (const s of secrets) expect(s).toMatch(/^whsec_/)
    needles.push(...secrets, firstBasicSecret, aKey, aPass, bKey, bPass)
    needles.push(basic('alice', aPass).slice(6), basic('bob', bPass).slice(6), ctx.stack.env.QUIRE_SECRETS_KEY!)
    formB = { key: b.key, keyHook: { id: bKeyHook.body.id, secret: bKeyHook.body.secret, apiKey: bKey } }

    for (const [hookId, p] of [
      [aKeyHook.body.id, 'a-key'],
      [aBasicHook.body.id, 'a-basic'],
    ] as const) {
      const pipe = await call(base, 'POST', '/v1/pipelines', {
        key: a.key,
        json: { name: `p-${p}`, definition: { bindings: { destination: { exit_webhook_id: hookId } } } },
      })
      await call(base, 'POST', `/v1/pipelines/${pipe.body.id}/versions/1/publish`, { key: a.key })
      const job = await call(base, 'POST', '/v1/jobs', {
        key: a.key,
        form: fileForm('file', [{ name: `${p}.pdf`, bytes: await invoicePdf() }], { pipeline_id: pipe.body.id }),
      })
      const r = await deliveredTo(`/${p}`, job.body.id)
      const secret = p === 'a-key' ? aKeyHook.body.hmac_secret : aBasicHook.body.hmac_secret
      expect(verifyFormA({ secret, rawBody: r.rawBody, signature: header(r, 'X-Service-Signature') })).toBe(true)
      if (p === 'a-key') expect(header(r, 'X-Receiver-Key')).toBe(aKey)
      else expect(header(r, 'Authorization')).toBe(basic('alice', aPass))
    }
    const bJob = await formBJob(b.key)
    const bKeyHit = await deliveredTo('/b-key', bJob)
    expect(verifiesB(bKeyHook.body.secret, bKeyHit)).toBe(true)
    expect(header(bKeyHit, 'X-Api-Key')).toBe(bKey)
    const bBasicHit = await deliveredTo('/b-basic', bJob)
    expect(verifiesB(bBasicSecret, bBasicHit)).toBe(true)
    expect(verifiesB(firstBasicSecret, bBasicHit)).toBe(false)
    expect(header(bBasicHit, 'Authorization')).toBe(basic('bob', bPass))

    // Stored sealed: v1:<key id>:..., credentials too; nothing in clear anywhere in the database or the logs.
    const rows = await db.query<{ secret: string; auth: Record<string, string> }>('SELECT secret, auth FROM webhooks')
    expect(rows.rows).toHaveLength(4)
    for (const row of rows.rows) {
      expect(row.secret).toMatch(/^v1:k[0-9a-f]{8}:/)
      expect(row.auth.key ?? row.auth.password).toMatch(/^v1:k[0-9a-f]{8}:/)
    }
    const everything = await wholeDatabase()
    const logs = allLogs()
    expect(logs.length).toBeGreaterThan(0)
    for (const n of needles) {
      expect(everything.includes(n), `database holds ${n.slice(0, 8)}…`).toBe(false)
      expect(logs.includes(n), `logs hold ${n.slice(0, 8)}…`).toBe(false)
    }
  }, 240_000)

  it('a plaintext row from before encryption still delivers; secrets:rotate re-seals it and the rest under a new key, idempotently, and the old key can be retired', async () => {
    expect(formB, 'runs after the test above').toBeDefined()
    const { key, keyHook } = formB!
    const legacySecret = token('whsec_legacy')
    const legacyKey = token('legacy-key')
    await db.query(`UPDATE webhooks SET secret = $1, auth = $2 WHERE id = $3`, [
      legacySecret,
      JSON.stringify({ type: 'api_key', headerName: 'X-Api-Key', key: legacyKey, location: 'header' }),
      keyHook.id,
    ])
    const legacyHit = await deliveredTo('/b-key', await formBJob(key))
    expect(verifiesB(legacySecret, legacyHit)).toBe(true)
    expect(header(legacyHit, 'X-Api-Key')).toBe(legacyKey)

    const oldKey = ctx.stack.env.QUIRE_SECRETS_KEY!
    const newKey = `next:${randomBytes(32).toString('base64')}`
    const rotate = () =>
      promisify(execFile)(
        process.execPath,
        ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'scripts', 'secrets-rotate.ts')],
        {
          cwd: ROOT,
          env: {
            ...ctx.stack.env,
            QUIRE_SECRETS_KEY: newKey,
            QUIRE_SECRETS_OLD_KEYS: oldKey,
          },
        },
      )
    const first = await rotate()
    expect(first.stdout).toMatch(
      /4 webhooks checked, 4 re-sealed with key next \(1 held plaintext\), 0 already current/,
    )
    const second = await rotate()
    expect(second.stdout).toMatch(
      /4 webhooks checked, 0 re-sealed with key next \(0 held plaintext\), 4 already current/,
    )
    for (const out of [first, second]) {
      for (const n of [...needles, legacySecret, legacyKey, newKey.slice(5)]) {
        expect(out.stdout + out.stderr).not.toContain(n)
      }
    }
    const rows = await db.query<{ secret: string; auth: Record<string, string> }>('SELECT secret, auth FROM webhooks')
    for (const row of rows.rows) {
      expect(row.secret).toMatch(/^v1:next:/)
      expect(row.auth.key ?? row.auth.password).toMatch(/^v1:next:/)
    }
    const everything = await wholeDatabase()
    for (const n of [legacySecret, legacyKey]) expect(everything).not.toContain(n)

    // The dispatcher restarted with only the new key (old one retired) still signs with the same secret.
    await ctx.stack.kill('webhook-dispatcher', 'SIGTERM')
    await ctx.stack.start('webhook-dispatcher', { QUIRE_SECRETS_KEY: newKey, QUIRE_SECRETS_OLD_KEYS: '' })
    const after = await deliveredTo('/b-key', await formBJob(key))
    expect(verifiesB(legacySecret, after)).toBe(true)
    expect(header(after, 'X-Api-Key')).toBe(legacyKey)
    for (const n of [legacySecret, legacyKey, newKey.slice(5)]) expect(allLogs()).not.toContain(n)
  }, 240_000)
})
