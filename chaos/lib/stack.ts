// One chaos scenario's deployment: a private PostgreSQL cluster and Redis (chaos/lib/servers.ts), a migrated database,
// the real apps as separate processes (as `npm start` runs them) with their logs kept in files, kill -9 / restart of an
// app, the RSS of each app's process tree (parse processes included) sampled throughout, and an optional local HTTPS
// webhook receiver the dispatcher trusts.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  createWriteStream,
  type WriteStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { applyMigrations } from '@quire/db'
import { createRedis, DELIVERY_QUEUE, stageQueueName } from '@quire/queues'
import { startHttpsReceiver, type HttpsReceiver, type HttpsReceiverOptions } from '@quire/testing'
import { Queue } from 'bullmq'
import pg from 'pg'
import { freePort, ROOT, sleep, stopChild } from '../../bench/lib/kit.ts'
import { type PrivatePostgres, type PrivateRedis, startPrivatePostgres, startPrivateRedis } from './servers.ts'

export const APPS = ['api', 'stage-worker', 'webhook-dispatcher'] as const
export type AppName = (typeof APPS)[number]
export const ADMIN_TOKEN = `chaos-admin-${randomBytes(16).toString('hex')}`

export type ChaosStack = {
  baseUrl: string
  apiPort: number
  databaseUrl: string
  env: Record<string, string>
  dir: string
  pg: PrivatePostgres
  redis: PrivateRedis
  receiver?: HttpsReceiver
  /** A pg client on the stack's database (reconnects after a PostgreSQL restart: use `query`). */
  query<T extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>
  start(app: AppName, extraEnv?: Record<string, string>): Promise<void>
  /** kill -9 the app's process (not its children: they must notice on their own). Returns the pids it had. */
  kill(app: AppName): Promise<{ pid: number; children: number[] }>
  running(app: AppName): boolean
  /** Apps that exited without the scenario killing them. */
  unexpectedExits: string[]
  /** Peak RSS (MB) of each app's process tree so far (parse processes included). */
  peakRss(): Record<AppName, number>
  /** Peak RSS (MB) of each app's own process, without its children. */
  peakOwnRss(): Record<AppName, number>
  logText(): string
  /** Files left in the apps' temporary directory and upload directory. */
  leftoverFiles(): string[]
  stop(): Promise<void>
}

export type StackOptions = {
  env?: Record<string, string>
  receiver?: HttpsReceiverOptions
  apps?: readonly AppName[]
}

export async function startChaosStack(label: string, opts: StackOptions = {}): Promise<ChaosStack> {
  const runDir = process.env.CHAOS_RUN_DIR ?? os.tmpdir()
  const dir = path.join(runDir, `${label}-${randomBytes(3).toString('hex')}`)
  mkdirSync(dir, { recursive: true })
  const pgServer = await startPrivatePostgres(path.join(dir, 'pg'))
  const redis = await startPrivateRedis(path.join(dir, 'redis'))
  const admin = new pg.Client({ connectionString: pgServer.adminUrl })
  await admin.connect()
  await admin.query('CREATE DATABASE quire_chaos')
  await admin.end()
  const databaseUrl = pgServer.adminUrl.replace(/\/postgres$/, '/quire_chaos')
  await applyMigrations({ databaseUrl, migrationsDir: path.join(ROOT, 'prisma', 'migrations') })

  const receiver = opts.receiver ? await startHttpsReceiver(opts.receiver) : undefined
  const apiPort = await freePort()
  // The apps' own temporary directory, so files they leave behind are theirs; tsx's transpile cache is shared.
  const tmp = path.join(dir, 'tmp')
  mkdirSync(tmp, { recursive: true })
  const uid = process.getuid?.() ?? 0
  try {
    mkdirSync(path.join(os.tmpdir(), `tsx-${uid}`), { recursive: true })
    symlinkSync(path.join(os.tmpdir(), `tsx-${uid}`), path.join(tmp, `tsx-${uid}`))
  } catch {}
  const logsDir = path.join(dir, 'logs')
  mkdirSync(logsDir, { recursive: true })
  let caFile: string | undefined
  if (receiver) {
    caFile = path.join(dir, 'receiver-ca.pem')
    writeFileSync(caFile, receiver.ca)
  }
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    TMPDIR: tmp,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    QUIRE_API_PORT: String(apiPort),
    QUIRE_HOST: '127.0.0.1',
    QUIRE_PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    QUIRE_ADMIN_TOKEN: ADMIN_TOKEN,
    QUIRE_SECRETS_KEY: randomBytes(32).toString('base64'),
    QUIRE_QUEUE_PREFIX: '{chaos}',
    QUIRE_BLOB_DIR: path.join(dir, 'blobs'),
    QUIRE_UPLOAD_DIR: path.join(dir, 'uploads'),
    QUIRE_DATA_DIR: path.join(dir, 'data'),
    QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    QUIRE_WEBHOOK_A_RETRY_BASE_MS: '250',
    QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS: '250,250,500,500,1000,1000,2000,2000',
    QUIRE_STAGE_LOCK_MS: '5000',
    QUIRE_PARSE_PROCESSES: '1',
    QUIRE_LOG_LEVEL: 'warn',
    ...(caFile ? { QUIRE_WEBHOOK_EXTRA_CA_FILE: caFile } : {}),
    ...opts.env,
  }
  for (const k of ['BENCH_ADMIN_URL', 'BENCH_RESULTS', 'TEST_DATABASE_ADMIN_URL']) delete env[k]

  const procs = new Map<AppName, ChildProcess>()
  const killed = new Set<number>()
  const unexpectedExits: string[] = []
  const peaks: Record<AppName, number> = { api: 0, 'stage-worker': 0, 'webhook-dispatcher': 0 }
  const ownPeaks: Record<AppName, number> = { api: 0, 'stage-worker': 0, 'webhook-dispatcher': 0 }
  const logFiles = APPS.map((a) => path.join(logsDir, `${a}.log`))
  const logStreams = {} as Record<AppName, WriteStream>
  APPS.forEach((a, i) => {
    logStreams[a] = createWriteStream(logFiles[i]!, { flags: 'a' })
  })

  const workerRedis = createRedis(redis.url, 'worker')
  workerRedis.on('error', () => {})
  const watched: Partial<Record<AppName, Queue>> = {
    'stage-worker': new Queue(stageQueueName('parse'), { connection: workerRedis, prefix: env.QUIRE_QUEUE_PREFIX }),
    'webhook-dispatcher': new Queue(DELIVERY_QUEUE, { connection: workerRedis, prefix: env.QUIRE_QUEUE_PREFIX }),
  }
  for (const q of Object.values(watched)) q.on('error', () => {})

  const start = async (app: AppName, extraEnv: Record<string, string> = {}) => {
    const queue = watched[app]
    const before = queue ? await queue.getWorkersCount().catch(() => 0) : 0
    const child = spawn(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'apps', app, 'src', 'main.ts')],
      { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    child.stdout?.pipe(logStreams[app], { end: false })
    child.stderr?.pipe(logStreams[app], { end: false })
    child.on('exit', (code, signal) => {
      if (child.pid && killed.has(child.pid)) return
      if (!stopping) unexpectedExits.push(`${app} exited (${signal ?? code})`)
    })
    procs.set(app, child)
    const deadline = Date.now() + 150_000
    if (app === 'api') {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`api exited at start (${child.exitCode}); see ${logFiles[0]}`)
        try {
          if ((await fetch(`http://127.0.0.1:${apiPort}/healthz`)).ok) break
        } catch {}
        if (Date.now() > deadline) throw new Error('api did not answer /healthz within 150 s')
        await sleep(200)
      }
      return
    }
    // A worker is ready when BullMQ lists one more worker on a queue it consumes.
    while (queue && (await queue.getWorkersCount().catch(() => 0)) <= before) {
      if (child.exitCode !== null) throw new Error(`${app} exited at start (${child.exitCode})`)
      if (Date.now() > deadline) throw new Error(`${app} did not start within 150 s`)
      await sleep(200)
    }
  }

  let stopping = false
  const sampler = setInterval(() => {
    const table = processTable()
    for (const [app, child] of procs) {
      if (!child.pid || child.exitCode !== null) continue
      peaks[app] = Math.max(peaks[app], treeRssMb(child.pid, table))
      ownPeaks[app] = Math.max(ownPeaks[app], rssMb(child.pid))
    }
  }, 300)

  let client: pg.Client | undefined
  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!client) {
          const c = new pg.Client({ connectionString: databaseUrl })
          c.on('error', () => {})
          await c.connect()
          client = c
        }
        return (await client.query<T>(sql, params)).rows
      } catch (e) {
        await client?.end().catch(() => {})
        client = undefined
        if (attempt >= 20) throw e
        await sleep(500)
      }
    }
  }

  const stack: ChaosStack = {
    baseUrl: `http://127.0.0.1:${apiPort}`,
    apiPort,
    databaseUrl,
    env,
    dir,
    pg: pgServer,
    redis,
    receiver,
    query,
    start,
    async kill(app) {
      const child = procs.get(app)
      if (!child?.pid || child.exitCode !== null) throw new Error(`${app} is not running`)
      const children = descendants(child.pid)
      killed.add(child.pid)
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await exited
      return { pid: child.pid, children }
    },
    running: (app) => {
      const c = procs.get(app)
      return !!c && c.exitCode === null && c.signalCode === null
    },
    unexpectedExits,
    peakRss: () => ({ ...peaks }),
    peakOwnRss: () => ({ ...ownPeaks }),
    logText: () => logFiles.map((f) => safeRead(f)).join('\n'),
    leftoverFiles: () => [...filesUnder(tmp), ...filesUnder(env.QUIRE_UPLOAD_DIR!)].map((p) => path.relative(dir, p)),
    async stop() {
      stopping = true
      clearInterval(sampler)
      await Promise.all([...procs.values()].map((c) => stopChild(c)))
      for (const s of Object.values(logStreams)) s.end()
      await Promise.all(Object.values(watched).map((q) => q.close().catch(() => {})))
      workerRedis.disconnect()
      await client?.end().catch(() => {})
      await receiver?.close()
      await pgServer.stop().catch(() => {})
      await redis.stop().catch(() => {})
      if (process.env.CHAOS_KEEP !== '1') rmSync(dir, { recursive: true, force: true })
    },
  }
  try {
    for (const app of opts.apps ?? APPS) await start(app)
  } catch (e) {
    await stack.stop()
    throw e
  }
  return stack
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** Children of every process, from /proc. */
function processTable(): Map<number, number[]> {
  const parents = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = safeRead(`/proc/${name}/stat`)
    // Field 4 (ppid) follows the command name in parentheses, which may itself hold spaces or parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (!ppid) continue
    const list = parents.get(ppid) ?? []
    list.push(Number(name))
    parents.set(ppid, list)
  }
  return parents
}

/** Every file under `dir` (absolute paths); tsx's cache links in a temporary directory are not the stack's files. */
export function filesUnder(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    let entries: import('node:fs').Dirent[] = []
    try {
      entries = readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isSymbolicLink() && e.name.startsWith('tsx-')) continue
      if (e.isDirectory()) walk(p)
      else out.push(p)
    }
  }
  walk(dir)
  return out
}

/** Every descendant of `pid` (children, grandchildren, ...). */
export function descendants(pid: number, parents = processTable()): number[] {
  const out: number[] = []
  const stack = [pid]
  while (stack.length) {
    for (const c of parents.get(stack.pop()!) ?? []) {
      out.push(c)
      stack.push(c)
    }
  }
  return out
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(safeRead(`/proc/${pid}/status`))?.[1] ?? 0)
  return kb / 1024
}

/** RSS of a process and all its descendants, in MB. */
export function treeRssMb(pid: number, table = processTable()): number {
  return [pid, ...descendants(pid, table)].reduce((sum, p) => sum + rssMb(p), 0)
}
