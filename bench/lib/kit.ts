// What every bench scenario shares: a database of its own, the real apps as separate processes, load generation
// (autocannon), RSS sampling from /proc, medians, and the result rows `npm run bench` collects.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyMigrations } from '@quire/db'
import { createRedis, DELIVERY_QUEUE, stageQueueName } from '@quire/queues'
import { appNodeFlags } from '@quire/testing'
import autocannon from 'autocannon'
import { Queue } from 'bullmq'
import pg from 'pg'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** `npm run bench -- --quick`: fewer rounds, shorter runs, smaller batches. */
export const QUICK = process.env.BENCH_QUICK === '1'
export const ADMIN_TOKEN = `bench-admin-${randomBytes(16).toString('hex')}`

/**
 * One line of the bench table. `ratio` is Quire against its baseline with higher always better: value / baseline
 * for rates, baseline / value for latencies and memory. `target` is the ratio (or bound) the issue asks for.
 */
export type BenchRow = {
  scenario: string
  metric: string
  value: number
  baseline: number | null
  ratio: number | null
  unit: string
  target: string
}

export function record(row: BenchRow): void {
  const out = { ...row, value: round(row.value), baseline: row.baseline === null ? null : round(row.baseline) }
  const line = `${JSON.stringify({ ...out, ratio: row.ratio === null ? null : round(row.ratio, 3) })}\n`
  if (process.env.BENCH_RESULTS) appendFileSync(process.env.BENCH_RESULTS, line)
  console.log(
    `  ${row.scenario} · ${row.metric}: ${out.value} ${row.unit}` +
      (row.baseline === null ? '' : ` vs ${out.baseline} (${row.ratio?.toFixed(2)}×, target ${row.target})`),
  )
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The rounds of a scenario whose work takes as long as the host needs (documents through the pipeline, pages through
 * OCR), as round numbers 0, 1, …: at least `min`, at most `max`, and one more only while the slowest round so far
 * still fits in `seconds`, counted from the first. Keeps the full run within its 15 minutes on a slow host, with
 * fewer rounds there; a scenario that stops short says so.
 */
export function* roundsWithin(opts: { label: string; min: number; max: number; seconds: number }): Generator<number> {
  const t0 = performance.now()
  let slowest = 0
  let round = 0
  for (; round < opts.max; round++) {
    if (round >= opts.min && performance.now() - t0 + slowest > opts.seconds * 1000) break
    const start = performance.now()
    yield round
    slowest = Math.max(slowest, performance.now() - start)
  }
  if (round < opts.max)
    console.log(`  ${opts.label} · ${round} of ${opts.max} rounds: the next would not fit in ${opts.seconds} s`)
}

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

/** A migrated database for one scenario (the sweepers act on the whole database, so scenarios never share one). */
export async function freshDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.BENCH_ADMIN_URL
  const base = process.env.DATABASE_URL
  if (!admin || !base) throw new Error('run scenarios through `npm run bench`')
  const name = `quire_bench_${label}_${process.pid}_${randomBytes(3).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  await client.query(`CREATE DATABASE "${name}"`)
  await client.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  await applyMigrations({ databaseUrl: url.toString(), migrationsDir: path.join(ROOT, 'prisma', 'migrations') })
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await c.end()
    },
  }
}

/**
 * Pays a warm-up's deferred database upkeep before the measured rounds: VACUUM ANALYZE of every table its load wrote,
 * then a CHECKPOINT. Otherwise autovacuum and the checkpointer, woken by the warm-up's thousands of rows, run during
 * the first measured round, whichever side it is (measured: the first 1-connection round after the submit warm-up
 * made 135-145 req/s on each side, the same rounds after this 175-200). What a side's own rounds write is still
 * vacuumed during the rounds, as in production. The CHECKPOINT needs a superuser or pg_checkpoint: skipped if refused.
 */
export async function settleDatabase(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('VACUUM ANALYZE')
    await client.query('CHECKPOINT').catch(() => {})
  } finally {
    await client.end()
  }
}

type AppName = 'api' | 'stage-worker' | 'webhook-dispatcher'

export type Apps = {
  baseUrl: string
  databaseUrl: string
  env: Record<string, string>
  start(app: AppName, extraEnv?: Record<string, string>): Promise<ChildProcess>
  /** Starts `count` processes of a worker app side by side; resolves once BullMQ lists every one of them. */
  startMany(app: Exclude<AppName, 'api'>, count: number, extraEnv?: Record<string, string>): Promise<ChildProcess[]>
  pid(app: AppName): number
  stop(): Promise<void>
}

/** The real apps, as `npm start` runs them, one process each, against a fresh database and queue prefix. */
export async function startApps(
  label: string,
  opts: {
    apps: AppName[]
    env?: Record<string, string>
    /** A database made beforehand, for a baseline started beside the apps; theirs from then on (dropped at stop). */
    database?: Awaited<ReturnType<typeof freshDatabase>>
  },
): Promise<Apps> {
  const db = opts.database ?? (await freshDatabase(label))
  const port = await freePort()
  const dir = mkdtempSync(path.join(os.tmpdir(), `quire-bench-${label}-`))
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    QUIRE_API_PORT: String(port),
    QUIRE_HOST: '127.0.0.1',
    QUIRE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    QUIRE_ADMIN_TOKEN: ADMIN_TOKEN,
    QUIRE_SECRETS_KEY: randomBytes(32).toString('base64'),
    QUIRE_QUEUE_PREFIX: `{bench${randomBytes(4).toString('hex')}}`,
    QUIRE_BLOB_DIR: path.join(dir, 'blobs'),
    QUIRE_UPLOAD_DIR: path.join(dir, 'uploads'),
    QUIRE_DATA_DIR: path.join(dir, 'data'),
    QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    QUIRE_LOG_LEVEL: 'warn',
    ...opts.env,
  }
  const procs: { app: AppName; child: ChildProcess }[] = []
  // A worker is ready when BullMQ lists one more worker on a queue it serves (timing must not include start-up).
  const redis = createRedis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'worker')
  const watched = {
    'stage-worker': new Queue(stageQueueName('parse'), { connection: redis, prefix: env.QUIRE_QUEUE_PREFIX }),
    'webhook-dispatcher': new Queue(DELIVERY_QUEUE, { connection: redis, prefix: env.QUIRE_QUEUE_PREFIX }),
  }
  const spawnApp = (app: AppName, extraEnv: Record<string, string>) => {
    const child = spawn(
      process.execPath,
      [
        // BENCH_CPU_PROF=<dir>: each app writes a V8 CPU profile there when it stops (node --cpu-prof).
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        // The app's own Node flags, as `npm start` and the containers give them (apps/<app>/package.json).
        ...appNodeFlags(ROOT, app),
        // BENCH_BUILT=1: the built apps (`npm run build`), as the containers run them; otherwise the sources via tsx.
        ...(process.env.BENCH_BUILT === '1'
          ? [path.join(ROOT, 'apps', app, 'dist', 'main.js')]
          : ['--conditions=@quire/source', '--import', 'tsx', path.join(ROOT, 'apps', app, 'src', 'main.ts')]),
      ],
      { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'inherit', 'inherit'] },
    )
    procs.push({ app, child })
    return child
  }
  const startMany = async (app: Exclude<AppName, 'api'>, count: number, extraEnv: Record<string, string> = {}) => {
    const queue = watched[app]
    const before = await queue.getWorkersCount()
    const children = Array.from({ length: count }, () => spawnApp(app, extraEnv))
    const deadline = Date.now() + 120_000
    while ((await queue.getWorkersCount()) < before + count) {
      if (children.some((c) => c.exitCode !== null) || Date.now() > deadline) throw new Error(`${app} did not start`)
      await sleep(100)
    }
    return children
  }
  const stopAll = async () => {
    await Promise.all(procs.map(({ child }) => stopChild(child)))
    await Promise.all(Object.values(watched).map((q) => q.close()))
    // The run's queues (hundreds of thousands of jobs after a submit scenario) go with it: left in Redis, every later
    // run would measure against a fuller server.
    await deleteKeys(redis, `${env.QUIRE_QUEUE_PREFIX}:*`).catch((e) =>
      console.error(`could not delete ${label}'s queue keys: ${e.message}`),
    )
    redis.disconnect()
    rmSync(dir, { recursive: true, force: true })
    await db.drop().catch((e) => console.error(`could not drop ${label} database: ${e.message}`))
  }
  const start = async (app: AppName, extraEnv: Record<string, string> = {}) => {
    if (app !== 'api') return (await startMany(app, 1, extraEnv))[0]!
    const child = spawnApp(app, extraEnv)
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, child)
    return child
  }
  // Side by side: each app's start-up is mostly its own module loading, and the quick run's budget is minutes.
  const started = await Promise.allSettled(opts.apps.map((app) => start(app)))
  const failed = started.find((r) => r.status === 'rejected')
  if (failed) {
    await stopAll()
    throw failed.reason
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    databaseUrl: db.url,
    env,
    start,
    startMany,
    pid(app) {
      const p = procs.find((x) => x.app === app && x.child.exitCode === null)
      if (!p?.child.pid) throw new Error(`${app} is not running`)
      return p.child.pid
    },
    stop: stopAll,
  }
}

/** Deletes every key matching `pattern` (SCAN, then UNLINK in batches: the server never blocks on one big call). */
async function deleteKeys(redis: ReturnType<typeof createRedis>, pattern: string): Promise<void> {
  // A cluster's keys are scanned node by node; the prefix's hash tag keeps them all on one.
  const servers = 'nodes' in redis ? redis.nodes('master') : [redis]
  for (const server of servers) {
    for await (const keys of server.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>)
      if (keys.length > 0) await server.unlink(...keys)
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(force)
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`)
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await sleep(100)
  }
  throw new Error(`${url} did not answer within 120 s`)
}

/** A workspace of `form` with a key holding every scope and plenty of credits. */
export async function benchWorkspace(baseUrl: string, form: 'A' | 'B', credits = 1_000_000_000) {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }
  const ws = await fetch(`${baseUrl}/admin/v1/workspaces`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: `bench-${randomBytes(3).toString('hex')}`, api_form: form, credits }),
  })
  const wsBody = (await ws.json()) as { id: string }
  if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(wsBody)}`)
  const key = await fetch(`${baseUrl}/admin/v1/workspaces/${wsBody.id}/api-keys`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({
      scopes: ['jobs:write', 'jobs:read', 'webhook:write', 'webhooks:write', 'webhooks:read', 'pipelines:write'],
    }),
  })
  const keyBody = (await key.json()) as { key: string }
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(keyBody)}`)
  return { workspaceId: wsBody.id, key: keyBody.key }
}

/** A multipart body with one file part, as bytes, and its content type. */
export function multipartBody(field: string, fileName: string, bytes: Uint8Array, fields: Record<string, string> = {}) {
  const boundary = `----quirebench${randomBytes(8).toString('hex')}`
  const parts: Buffer[] = []
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`))
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    Buffer.from(bytes),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  )
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` }
}

export type LoadResult = { rps: number; p50: number; p99: number; non2xx: number; errors: number }

/** Closed-loop load from autocannon: `connections` clients each sending the next request when the last answered. */
export async function load(opts: {
  url: string
  connections: number
  seconds: number
  method?: 'POST' | 'GET'
  headers?: Record<string, string>
  body?: Buffer
}): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.seconds,
    method: opts.method ?? 'POST',
    headers: opts.headers,
    body: opts.body,
  })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }
}

/** CPU time (user + system) a process has used so far, in ms (from /proc: clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`)
}

/**
 * CPU time a process's main thread (the event loop) has used so far, in ms. The rest of `cpuMs` is its other
 * threads: V8's background compiler and GC helpers, libuv's pool (file system calls).
 */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`)
}

function statCpuMs(statFile: string): number {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * The share of the host's CPU time that was busy (not idle, not waiting for I/O) since `hostCpuTicks()` gave
 * `before`: 1 when every core was busy the whole time. From the first line of /proc/stat.
 */
export function hostCpuBusySince(before: { idle: number; total: number }): number {
  const now = hostCpuTicks()
  const total = now.total - before.total
  return total > 0 ? 1 - (now.idle - before.idle) / total : 0
}

export function hostCpuTicks(): { idle: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) }
}

/** CPU time used so far by a process and every live process below it (a worker's parse processes), in ms. */
export function treeCpuMs(root: number): number {
  const stats = new Map<number, { ppid: number; ms: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')
      stats.set(Number(entry), { ppid: Number(fields[1]), ms: (Number(fields[11]) + Number(fields[12])) * 10 })
    } catch {}
  }
  let total = 0
  for (const [pid, st] of stats) {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = stats.get(p)?.ppid ?? 0, hops++) {
      if (p === root) {
        total += st.ms
        break
      }
    }
  }
  return total
}

/**
 * CPU time used so far by each PostgreSQL backend serving one database, in ms: the server's processes whose title
 * names the database (`postgres: user db host(port) state`).
 */
export function postgresCpu(database: string): Map<number, number> {
  const byPid = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmd.startsWith('postgres: ') && cmd.split(' ').includes(database))
        byPid.set(Number(entry), cpuMs(Number(entry)))
    } catch {}
  }
  return byPid
}

/**
 * CPU the database's backends used since `before` (a postgresCpu snapshot), in ms. A backend that ended meanwhile
 * (a pool closing an idle connection) takes its CPU with it: an undercount, never a negative.
 */
export function postgresCpuSince(database: string, before: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of postgresCpu(database)) total += ms - (before.get(pid) ?? 0)
  return total
}

/** Resident set size of a process, in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

/** Samples a process's RSS every `everyMs` until `stop()`; returns the peak seen. */
export function sampleRss(pid: number, everyMs = 25) {
  let peak = rssMb(pid)
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid))
    } catch {}
  }, everyMs)
  return {
    stop() {
      clearInterval(timer)
      return peak
    },
  }
}

/** Waits until `count()` reaches `n`, polling; returns the seconds it took from `since`. */
export async function waitForCount(count: () => Promise<number>, n: number, since: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const seen = await count()
    if (seen >= n) return (performance.now() - since) / 1000
    if (Date.now() > deadline) throw new Error(`only ${seen} of ${n} done after ${timeoutMs} ms`)
    await sleep(50)
  }
}
