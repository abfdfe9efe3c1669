// @ts-check
// `npm run chaos [-- --quick] [<name>...]`: the fault and abuse suite (issue 13). Runs each scenario in
// chaos/*.chaos.ts (or those whose names contain one of the arguments) as its own process. Each scenario starts a
// PostgreSQL cluster and a redis-server of its own (own ports, data under a temporary directory; the machine's shared
// servers are never touched), the real apps on them, drives load, injects its fault and checks the invariants
// afterwards. This script prints one table, writes chaos/results/latest.json and exits 1 when any invariant broke or
// a scenario crashed. `--quick` (CI) uses fewer jobs and requests and shorter outages (under ~6 minutes on 2 cores);
// the full run takes under ~20.
// Environment given to scenarios: CHAOS_QUICK, CHAOS_RESULTS (the file rows are appended to), CHAOS_RUN_DIR (where
// scenarios keep their servers' data; whatever is still running there is stopped afterwards). CHAOS_KEEP=1 keeps the
// scenario directories (logs, PostgreSQL log) for inspection.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT } from './services.mjs'
import { ensureInstalled, log, prismaGenerate, step } from './setup.mjs'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const wanted = args.filter((a) => !a.startsWith('--'))
const dir = path.join(ROOT, 'chaos')
const scenarios = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.chaos.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort()
if (scenarios.length === 0) {
  console.error(`no chaos scenario matches ${wanted.join(', ')} in chaos/`)
  process.exit(1)
}

await step('dependencies checked', () => ensureInstalled())
await step('prisma generate', () => prismaGenerate())
const resultsDir = path.join(dir, 'results')
fs.mkdirSync(resultsDir, { recursive: true })
const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-chaos-'))
fs.chmodSync(runDir, 0o755) // the private PostgreSQL runs as the postgres user when this runs as root
const rowsFile = path.join(runDir, 'rows.jsonl')
fs.writeFileSync(rowsFile, '')
const started = Date.now()
/** @type {string[]} */
const crashed = []
let interrupted = false
/** @type {import('node:child_process').ChildProcess | undefined} */
let current
const onSignal = () => {
  interrupted = true
  current?.kill('SIGTERM')
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
try {
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    CHAOS_QUICK: quick ? '1' : '0',
    CHAOS_RESULTS: rowsFile,
    CHAOS_RUN_DIR: runDir,
  }
  for (const file of scenarios) {
    if (interrupted) break
    log(`chaos ${file}${quick ? ' (quick)' : ''}`)
    const t0 = Date.now()
    const before = countRows()
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, ['--conditions=@quire/source', '--import', 'tsx', path.join(dir, file)], {
        cwd: ROOT,
        env,
        stdio: 'inherit',
      })
      current = child
      child.on('exit', (c) => resolve(c ?? 1))
      child.on('error', () => resolve(1))
    })
    log(`chaos ${file}: ${Math.round((Date.now() - t0) / 1000)} s`)
    stopLeftovers(runDir)
    if (code !== 0 || countRows() === before) crashed.push(file)
  }
} finally {
  stopLeftovers(runDir)
}

const rows = readRows()
for (const file of crashed) {
  rows.push({
    scenario: file,
    checks: [{ name: 'scenario process finished', ok: false, detail: 'it crashed; see its output above' }],
    passed: false,
    recovery_s: null,
    peak_rss_mb: {},
    detail: 'crashed',
    seconds: 0,
  })
}
const summary = {
  date: new Date().toISOString(),
  quick,
  seconds: Math.round((Date.now() - started) / 1000),
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
  node: process.version,
  passed: rows.every((r) => r.passed) && crashed.length === 0,
  scenarios: rows,
}
if (wanted.length === 0 || !fs.existsSync(path.join(resultsDir, 'latest.json'))) {
  fs.writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify(summary, null, 2)}\n`)
}
if (process.env.CHAOS_KEEP !== '1') fs.rmSync(runDir, { recursive: true, force: true })
else log(`scenario directories kept in ${runDir}`)
console.log(`\n${table(rows)}\n`)
for (const r of rows) {
  for (const c of r.checks.filter((c) => !c.ok)) console.log(`BROKEN  ${r.scenario} · ${c.name}: ${c.detail ?? ''}`)
}
console.log(
  `${summary.date} · ${summary.cpus} · Node ${summary.node}${quick ? ' · quick run' : ''} · ${summary.seconds} s · ` +
    `${summary.passed ? 'every invariant held' : 'INVARIANTS BROKEN'}`,
)
process.exit(summary.passed ? 0 : 1)

function countRows() {
  return fs.readFileSync(rowsFile, 'utf8').split('\n').filter(Boolean).length
}

function readRows() {
  return fs
    .readFileSync(rowsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

/**
 * Stops what a scenario left running under the run directory (it crashed or was interrupted): PostgreSQL clusters by
 * their postmaster.pid, redis-servers by their pid files. Only processes this run started are ever signalled.
 * @param {string} root
 */
function stopLeftovers(root) {
  /** @param {string} d */
  const walk = (d) => {
    let entries = []
    try {
      entries = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory() && !e.isSymbolicLink()) walk(p)
      else if (e.name === 'postmaster.pid') signalPid(fs.readFileSync(p, 'utf8').split('\n')[0], 'SIGINT')
      else if (/^redis-\d+\.pid$/.test(e.name)) signalPid(fs.readFileSync(p, 'utf8'), 'SIGKILL')
    }
  }
  walk(root)
}

/**
 * @param {string | undefined} text
 * @param {NodeJS.Signals} signal
 */
function signalPid(text, signal) {
  const pid = Number(String(text ?? '').trim())
  if (!pid) return
  try {
    process.kill(pid, signal)
    // Give PostgreSQL its fast shutdown before the directory goes.
    for (let i = 0; i < 50; i++) {
      process.kill(pid, 0)
      spawnSync('sleep', ['0.1'])
    }
  } catch {}
}

/** @param {any[]} list */
function table(list) {
  const apps = ['api', 'stage-worker', 'webhook-dispatcher']
  const head = ['scenario', 'checks', 'result', 'recovery (s)', 'peak RSS MB (api / worker / dispatcher)', 'detail']
  const body = list.map((r) => [
    r.scenario,
    `${r.checks.filter((c) => c.ok).length}/${r.checks.length}`,
    r.passed ? 'passed' : 'FAILED',
    r.recovery_s === null ? '—' : String(r.recovery_s),
    apps.map((a) => (r.peak_rss_mb[a] === undefined ? '—' : String(r.peak_rss_mb[a]))).join(' / '),
    r.detail,
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)))
  /** @param {string[]} cells */
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n')
}
