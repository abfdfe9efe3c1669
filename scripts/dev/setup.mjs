// @ts-check
// Set-up steps shared by scripts/start.mjs and scripts/test.mjs. Plain Node, no third-party
// imports at the top (it runs before `npm install`).
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT, withDatabase } from './services.mjs'

export const log = (msg) => console.log(`[setup] ${msg}`)
const PRISMA = path.join(ROOT, 'scripts', 'dev', 'prisma', 'prisma.mjs')
const MIGRATE = path.join(ROOT, 'packages', 'db', 'src', 'migrate', 'migrate.main.ts')
const GENERATED = path.join(ROOT, 'packages', 'db', 'src', 'generated')

/** Times a step and logs its duration. */
export async function step(name, fn) {
  const t0 = Date.now()
  const r = await fn()
  log(`${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
  return r
}

/**
 * Calls fn once when the process that started this one goes away. `kill <pid of npm>` sends SIGTERM
 * to npm, which passes it to its `sh -c`, which dies without passing it on: without this, this
 * script and everything it started would keep running as orphans.
 */
export function onParentExit(fn, intervalMs = 500) {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    fn()
  }, intervalMs)
  timer.unref()
}

/** Runs a command with inherited stdio; rejects on a non-zero exit. */
export function runInherit(cmd, args, { env = process.env, cwd = ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: 'inherit' })
    child.on('error', reject)
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(cmd)} ${args.join(' ')} exited with ${signal ?? code}`)),
    )
  })
}

/** Runs a command capturing its output; rejects with the output on a non-zero exit. */
function runCapture(cmd, args, { env = process.env, cwd = ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(Object.assign(new Error(out.trim() || `exit ${code}`), { output: out })),
    )
  })
}

/** `npm install` when a dependency of the root package.json is missing from node_modules. */
export function ensureInstalled() {
  if (process.env.QUIRE_SKIP_INSTALL === '1') return
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })
  const missing = deps.filter((d) => !fs.existsSync(path.join(ROOT, 'node_modules', d, 'package.json')))
  if (!missing.length) return
  log(`installing dependencies (missing: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''})`)
  // `npm ci` fails with this registry (see STACK-NOTES §2); `npm install` works.
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' })
  if (r.status !== 0) throw new Error(`npm install failed (${r.status ?? r.error})`)
}

/**
 * Runs the Prisma CLI through the offline wrapper.
 * @param {string[]} args
 * @param {{ databaseUrl?: string, quiet?: boolean }} [opts]
 */
export function prisma(args, { databaseUrl, quiet = false } = {}) {
  const env = { ...process.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  return quiet
    ? runCapture(process.execPath, [PRISMA, ...args], { env })
    : runInherit(process.execPath, [PRISMA, ...args], { env })
}

/** `prisma generate`, skipped when the schema and the Prisma version are unchanged since the last run. */
export async function prismaGenerate() {
  const require = createRequire(path.join(ROOT, 'package.json'))
  const version = require('prisma/package.json').version
  const schema = fs.readFileSync(path.join(ROOT, 'prisma', 'schema.prisma'))
  const hash = createHash('sha256').update(version).update('\0').update(schema).digest('hex')
  const stamp = path.join(GENERATED, '.schema-hash')
  const fresh =
    process.env.QUIRE_FORCE_GENERATE !== '1' &&
    fs.existsSync(path.join(GENERATED, 'prisma', 'client.ts')) &&
    fs.existsSync(stamp) &&
    fs.readFileSync(stamp, 'utf8') === hash
  if (fresh) {
    log('prisma generate skipped: schema unchanged since the last run (QUIRE_FORCE_GENERATE=1 forces it)')
    return false
  }
  await prisma(['generate'], { quiet: true })
  fs.writeFileSync(stamp, hash)
  return true
}

/** sha256 of each migration.sql, by migration directory name (what Prisma stores as the checksum). */
function localMigrations() {
  const dir = path.join(ROOT, 'prisma', 'migrations')
  const out = new Map()
  if (!fs.existsSync(dir)) return out
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name, 'migration.sql')
    if (e.isDirectory() && fs.existsSync(file))
      out.set(e.name, createHash('sha256').update(fs.readFileSync(file)).digest('hex'))
  }
  return out
}

async function loadPg() {
  const require = createRequire(path.join(ROOT, 'package.json'))
  const mod = await import(pathToFileURL(require.resolve('pg')).href)
  return mod.default ?? mod
}

/**
 * Names of applied migrations that no longer match prisma/migrations (edited or removed), e.g.
 * after `npm run db:reset-migration` regenerated the init migration. Empty when none or no table.
 */
export async function divergedMigrations(databaseUrl) {
  const pg = await loadPg()
  const u = new URL(databaseUrl)
  const schema = u.searchParams.get('schema') ?? 'public'
  u.searchParams.delete('schema')
  const client = new pg.Client({ connectionString: u.toString() })
  client.on('error', () => {})
  await client.connect()
  try {
    const table = `"${schema.replace(/"/g, '""')}"."_prisma_migrations"`
    const { rows: exists } = await client.query('SELECT to_regclass($1) AS t', [table])
    if (!exists[0].t) return []
    const { rows } = await client.query(`SELECT migration_name, checksum FROM ${table} WHERE rolled_back_at IS NULL`)
    const local = localMigrations()
    return rows.filter((r) => local.get(r.migration_name) !== r.checksum).map((r) => r.migration_name)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Applies prisma/migrations to databaseUrl (creating the database when missing) with the product's own migrator,
 * the one the production `migrate` container runs (packages/db/src/migrate), from source.
 */
export async function migrateDeploy(databaseUrl) {
  try {
    await runCapture(process.execPath, ['--conditions=@quire/source', '--import', 'tsx', MIGRATE], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    })
  } catch (e) {
    throw new Error(`migrate failed:\n${e.message}`)
  }
}

export { withDatabase }

/**
 * Builds the review desk the API serves at /review (apps/review-desk/build.mjs: one esbuild bundle, well under a
 * second), so `npm start` and `npm test` serve the current sources without a separate `npm run build`.
 */
export async function buildReviewDesk() {
  try {
    await runCapture(process.execPath, [path.join(ROOT, 'apps', 'review-desk', 'build.mjs')])
  } catch (e) {
    throw new Error(`review desk build failed:\n${e.message}`)
  }
}

/**
 * The browser the dashboard test drives: Debian's `chromium` at /usr/bin/chromium, installed with apt-get when missing
 * and allowed (root, QUIRE_ALLOW_INSTALL not 0). Without it that test fails; it is never skipped.
 */
export function ensureChromium({ allowInstall = true } = {}) {
  const bin = '/usr/bin/chromium'
  if (fs.existsSync(bin)) return
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (!allowInstall || !isRoot) {
    log(`${bin} is missing and cannot be installed here: run apt-get install chromium (the dashboard test needs it)`)
    return
  }
  log('chromium is missing; installing it with apt-get (for the dashboard browser test)')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, stdio: 'inherit' })
  let r = install()
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { env, stdio: 'inherit' })
    r = install()
  }
  if (r.status !== 0) log(`apt-get install chromium failed (${r.status}); the dashboard test will fail`)
}
