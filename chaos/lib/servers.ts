// PostgreSQL and Redis of the chaos run's own: a private PostgreSQL cluster (initdb into the scenario's directory,
// its own port, pg_ctl) and a redis-server on its own port without persistence. Faults stop, flush and restart them
// without touching any server the machine shares with others. As root, PostgreSQL runs as the `postgres` user.
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { freePort, sleep } from '../../bench/lib/kit.ts'

const isRoot = process.getuid?.() === 0

/** The newest PostgreSQL server binaries installed (Debian layout), or those on PATH. */
function pgBin(name: string): string {
  const base = '/usr/lib/postgresql'
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin', name)))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return path.join(base, versions[0], 'bin', name)
  }
  return name
}

function postgresIds(): { uid: number; gid: number } | undefined {
  if (!isRoot) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

export type PrivatePostgres = {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` (trust on loopback; the port is ours alone). */
  adminUrl: string
  port: number
  /** `pg_ctl stop -m fast`: every connection is closed, new ones are refused. */
  stop(): Promise<void>
  start(): Promise<void>
}

export async function startPrivatePostgres(dir: string): Promise<PrivatePostgres> {
  mkdirSync(dir, { recursive: true })
  const ids = postgresIds()
  if (ids) chownSync(dir, ids.uid, ids.gid)
  const data = path.join(dir, 'pgdata')
  const port = await freePort()
  const asPg = { cwd: dir, ...(ids ?? {}), encoding: 'utf8' as const, env: { ...process.env, LC_ALL: 'C' } }
  const init = spawnSync(
    pgBin('initdb'),
    [`--pgdata=${data}`, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--locale=C', '--no-sync'],
    asPg,
  )
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error}`)
  // Durability is not under test (the cluster is thrown away); CPU is scarce, so no fsync.
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c max_connections=300',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
  ].join(' ')
  const ctl = (args: string[]) => {
    const r = spawnSync(pgBin('pg_ctl'), ['-D', data, ...args], asPg)
    if (r.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${r.stderr || r.stdout || r.error}`)
  }
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`
  const start = async () => {
    ctl(['-l', path.join(dir, 'postgres.log'), '-o', options, '-w', '-t', '60', 'start'])
    const deadline = Date.now() + 30_000
    for (;;) {
      const c = new pg.Client({ connectionString: adminUrl })
      try {
        await c.connect()
        await c.end()
        return
      } catch (e) {
        await c.end().catch(() => {})
        if (Date.now() > deadline) throw e
        await sleep(200)
      }
    }
  }
  await start()
  return {
    adminUrl,
    port,
    start,
    async stop() {
      ctl(['-m', 'fast', '-w', '-t', '60', 'stop'])
    },
  }
}

export type PrivateRedis = {
  url: string
  port: number
  /** FLUSHALL, then SHUTDOWN NOSAVE and start again on the same port: every queue, lock and job is gone. */
  flushAndRestart(downMs?: number): Promise<void>
  stop(): Promise<void>
}

export async function startPrivateRedis(dir: string): Promise<PrivateRedis> {
  mkdirSync(dir, { recursive: true })
  const port = await freePort()
  const pidfile = path.join(dir, `redis-${port}.pid`)
  const url = `redis://127.0.0.1:${port}`
  const start = async () => {
    execFileSync('redis-server', [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--pidfile',
      pidfile,
      '--logfile',
      path.join(dir, 'redis.log'),
    ])
    const deadline = Date.now() + 15_000
    while (!(await ping(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`)
      await sleep(50)
    }
  }
  const stop = async () => {
    const pid = readPid(pidfile)
    try {
      execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'ignore' })
    } catch {
      if (pid) killQuietly(pid, 'SIGKILL')
    }
    const deadline = Date.now() + 10_000
    while ((await ping(port)) || (pid && alive(pid))) {
      if (Date.now() > deadline) break
      await sleep(50)
    }
  }
  await start()
  return {
    url,
    port,
    stop,
    async flushAndRestart(downMs = 0) {
      execFileSync('redis-cli', ['-p', String(port), 'flushall'], { stdio: 'ignore' })
      await stop()
      await sleep(downMs)
      await start()
    },
  }
}

async function ping(port: number): Promise<boolean> {
  try {
    return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: 'pipe' }).includes('PONG')
  } catch {
    return false
  }
}

function readPid(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || undefined
  } catch {
    return undefined
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {}
}
