// Starts Quire's three apps as separate processes, the way an operator runs them, against the test run's database
// and Redis with a queue prefix of its own, and talks to them over HTTP like a client.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appNodeFlags, startHttpsReceiver, type HttpsReceiver } from '@quire/testing'
import { afterAll, beforeAll } from 'vitest'
import { applyMigrations } from '@quire/db'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
let stackCount = 0

export const ADMIN_TOKEN = 'blackbox-admin-token'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

type AppName = 'api' | 'stage-worker' | 'webhook-dispatcher'

export type Stack = {
  baseUrl: string
  env: Record<string, string>
  logs: Record<AppName, string[]>
  start(app: AppName, extraEnv?: Record<string, string>): Promise<void>
  kill(app: AppName, signal?: NodeJS.Signals): Promise<void>
  stop(): Promise<void>
  /** The process id of a running app (for example to read its memory use from /proc), if it runs. */
  pid(app: AppName): number | undefined
}

/**
 * One database per stack, as one deployment has one: the outbox and the sweepers act on the whole database, so two
 * stacks sharing one would move each other's work.
 */
async function createStackDatabase(): Promise<string> {
  const base = process.env.DATABASE_URL
  const admin = process.env.TEST_DATABASE_ADMIN_URL
  if (!base || !admin)
    throw new Error('run black-box tests through `npm test` (it provides DATABASE_URL and TEST_DATABASE_ADMIN_URL)')
  const { default: pg } = await import('pg')
  const name = `${process.env.QUIRE_TEST_DB_PREFIX ?? 'quire_test'}_bb${process.pid}_${++stackCount}`
  const adminClient = new pg.Client({ connectionString: admin })
  await adminClient.connect()
  await adminClient.query(`DROP DATABASE IF EXISTS "${name}"`)
  await adminClient.query(`CREATE DATABASE "${name}"`)
  await adminClient.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  // The product's own migrator (as the compose `migrate` service runs it), so the stack's database has Prisma's
  // history table and /readyz sees its migrations applied.
  await applyMigrations({ databaseUrl: url.toString(), migrationsDir: path.join(ROOT, 'prisma', 'migrations') })
  return url.toString()
}

export type StackOptions = {
  receiverCa?: string
  env?: Record<string, string>
  /** Rewrites the database URL the apps get (e.g. to reach PostgreSQL through a proxy the test can cut). */
  databaseUrlForApps?: (url: string) => string
  /** Rewrites the Redis URL the apps get (e.g. to reach Redis through a proxy the test can cut). */
  redisUrlForApps?: (url: string) => string
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const port = await freePort()
  const created = await createStackDatabase()
  const databaseUrl = opts.databaseUrlForApps ? opts.databaseUrlForApps(created) : created
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-bb-'))
  let caFile: string | undefined
  if (opts.receiverCa) {
    caFile = path.join(dir, 'receiver-ca.pem')
    writeFileSync(caFile, opts.receiverCa)
  }
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    ...(opts.redisUrlForApps
      ? { REDIS_URL: opts.redisUrlForApps(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') }
      : {}),
    QUIRE_API_PORT: String(port),
    QUIRE_API_HOST: '127.0.0.1',
    QUIRE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    QUIRE_ADMIN_TOKEN: ADMIN_TOKEN,
    // The stack's own key, so the apps never fall back to the development key file in the repository's .data/.
    QUIRE_SECRETS_KEY: randomBytes(32).toString('base64'),
    QUIRE_QUEUE_PREFIX: `{bb${randomBytes(4).toString('hex')}}`,
    QUIRE_BLOB_DIR: path.join(dir, 'blobs'),
    QUIRE_UPLOAD_DIR: path.join(dir, 'uploads'),
    QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    QUIRE_WEBHOOK_A_RETRY_BASE_MS: '200',
    QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS: '200,200,200,200,200,200,200,200',
    QUIRE_STAGE_LOCK_MS: '4000',
    QUIRE_LOG_LEVEL: 'warn',
    // A status or error code a route does not declare becomes a 500, which the contract check in client.ts reports.
    QUIRE_ENFORCE_API_CONTRACT: 'true',
    ...(caFile ? { QUIRE_WEBHOOK_EXTRA_CA_FILE: caFile } : {}),
    ...opts.env,
  }
  const procs = new Map<AppName, ChildProcess>()
  const logs: Record<AppName, string[]> = { api: [], 'stage-worker': [], 'webhook-dispatcher': [] }

  const start = async (app: AppName, extraEnv: Record<string, string> = {}) => {
    const child = spawn(
      process.execPath,
      [
        ...appNodeFlags(ROOT, app),
        '--conditions=@quire/source',
        '--import',
        'tsx',
        path.join(ROOT, 'apps', app, 'src', 'main.ts'),
      ],
      {
        cwd: ROOT,
        env: { ...env, ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    child.stdout!.on('data', (d) => logs[app].push(String(d)))
    child.stderr!.on('data', (d) => logs[app].push(String(d)))
    procs.set(app, child)
    if (app === 'api') await waitForHealth(`http://127.0.0.1:${port}/healthz`, child, logs.api)
  }

  const kill = async (app: AppName, signal: NodeJS.Signals = 'SIGKILL') => {
    const child = procs.get(app)
    if (!child || child.exitCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill(signal)
    // A process that does not stop on SIGTERM within 10 s is killed, so a test run never hangs on shutdown.
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(force)
  }

  try {
    await Promise.all([start('api'), start('stage-worker'), start('webhook-dispatcher')])
  } catch (err) {
    // A stack that fails to start must not leave its other apps running (they would load the machine for the rest
    // of the run).
    for (const child of procs.values()) if (child.exitCode === null) child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    env,
    logs,
    start,
    kill,
    async stop() {
      await Promise.all([...procs.keys()].map((a) => kill(a, 'SIGTERM')))
      rmSync(dir, { recursive: true, force: true })
    },
    pid(app) {
      const child = procs.get(app)
      return child && child.exitCode === null ? child.pid : undefined
    },
  }
}

async function waitForHealth(url: string, child: ChildProcess, log: string[]) {
  // Generous: on a loaded 2-core machine a cold start (tsx transpiling every package) can take over a minute.
  const deadline = Date.now() + 150_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`api exited early:\n${log.join('')}`)
    try {
      const res = await fetch(url)
      if (res.ok) return
    } catch {}
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`api did not become healthy:\n${log.join('')}`)
}

/**
 * Registers beforeAll/afterAll that start a real HTTPS webhook receiver and a stack trusting it, and stop both.
 * Read `ctx.stack` and `ctx.receiver` inside tests.
 */
export function useStackWithReceiver(opts: Omit<StackOptions, 'receiverCa'> = {}) {
  const ctx = {} as { stack: Stack; receiver: HttpsReceiver }
  beforeAll(async () => {
    ctx.receiver = await startHttpsReceiver()
    ctx.stack = await startStack({ ...opts, receiverCa: ctx.receiver.ca })
  }, 120_000)
  afterAll(async () => {
    await ctx.stack?.stop()
    await ctx.receiver?.close()
  })
  return ctx
}
