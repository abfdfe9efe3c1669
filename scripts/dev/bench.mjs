// @ts-check
// `npm run bench [-- --quick] [<name>...]`: timing goals live here, not in the tests. Sets up like `npm test`
// (PostgreSQL and Redis, started or installed when missing), then runs each scenario in bench/*.bench.ts (or those
// whose names contain one of the arguments) as its own process. Each scenario starts what it measures (the real apps,
// each on a database of its own) and its bare baseline, in the same run, and reports rows; this script prints them as
// one table with the machine, Node and dependency versions, and writes bench/results/latest.json (the rows) and
// bench/results/latest-machine.json. It reports; a missed target never fails it. A scenario that crashes does.
// `--quick` shortens every scenario (CI-sized, under 2 minutes); the full run takes under 15.
// Environment given to scenarios: DATABASE_URL (a server URL; scenarios create their own databases through
// BENCH_ADMIN_URL), REDIS_URL, BENCH_QUICK, BENCH_RESULTS (the file rows are appended to).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ensureServices, ROOT, withDatabase } from './services.mjs'
import { ensureInstalled, log, prismaGenerate, step } from './setup.mjs'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const wanted = args.filter((a) => !a.startsWith('--'))
const dir = path.join(ROOT, 'bench')
const scenarios = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort()
if (scenarios.length === 0) {
  console.error(`no bench scenario matches ${wanted.join(', ')} in bench/`)
  process.exit(1)
}

await step('dependencies checked', () => ensureInstalled())
const services = await step('services ready', () =>
  ensureServices({ database: null, allowInstall: process.env.QUIRE_ALLOW_INSTALL !== '0' }),
)
const resultsDir = path.join(dir, 'results')
fs.mkdirSync(resultsDir, { recursive: true })
const rowsFile = path.join(os.tmpdir(), `quire-bench-${process.pid}.jsonl`)
fs.writeFileSync(rowsFile, '')
const started = Date.now()
const crashed = []
try {
  await step('prisma generate', () => prismaGenerate())
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: withDatabase(services.adminUrl, 'postgres'),
    BENCH_ADMIN_URL: withDatabase(services.adminUrl, 'postgres'),
    REDIS_URL: services.redisUrl ?? '',
    BENCH_QUICK: quick ? '1' : '0',
    BENCH_RESULTS: rowsFile,
  }
  for (const file of scenarios) {
    log(`bench ${file}${quick ? ' (quick)' : ''}`)
    const t0 = Date.now()
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, ['--conditions=@quire/source', '--import', 'tsx', path.join(dir, file)], {
        cwd: ROOT,
        env,
        stdio: 'inherit',
      })
      child.on('exit', (c) => resolve(c ?? 1))
      child.on('error', () => resolve(1))
    })
    log(`bench ${file}: ${Math.round((Date.now() - t0) / 1000)} s`)
    if (code !== 0) crashed.push(file)
  }
} finally {
  await services.stop()
}

const rows = fs
  .readFileSync(rowsFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
fs.rmSync(rowsFile, { force: true })
const machine = {
  date: new Date().toISOString(),
  quick,
  seconds: Math.round((Date.now() - started) / 1000),
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
  memory_gb: Math.round(os.totalmem() / 1024 ** 3),
  os: `${os.type()} ${os.release()}`,
  node: process.version,
  dependencies: versions(['bullmq', 'ioredis', 'koa', '@prisma/client', 'pg', 'formidable', 'unpdf', 'tesseract.js']),
}
// A run of some scenarios only leaves the last full table in place.
if (wanted.length === 0 || !fs.existsSync(path.join(resultsDir, 'latest.json'))) {
  fs.writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify(rows, null, 2)}\n`)
  fs.writeFileSync(path.join(resultsDir, 'latest-machine.json'), `${JSON.stringify(machine, null, 2)}\n`)
}
console.log(`\n${table(rows)}\n`)
console.log(
  `${machine.date} · ${machine.cpus} · ${machine.memory_gb} GB · ${machine.os} · Node ${machine.node}` +
    `${quick ? ' · quick run' : ''} · ${machine.seconds} s`,
)
console.log(
  Object.entries(machine.dependencies)
    .map(([k, v]) => `${k} ${v}`)
    .join(' · '),
)
if (crashed.length) console.error(`scenarios that crashed: ${crashed.join(', ')}`)
process.exit(crashed.length ? 1 : 0)

/** @param {string[]} names */
function versions(names) {
  /** @type {Record<string, string>} */
  const out = {}
  for (const name of names) {
    try {
      out[name] = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version
    } catch {
      out[name] = 'missing'
    }
  }
  return out
}

/** @param {{scenario: string, metric: string, value: number, baseline: number | null, ratio: number | null, unit: string, target: string}[]} list */
function table(list) {
  const head = ['scenario', 'metric', 'Quire', 'baseline', 'ratio', 'target', 'met']
  const body = list.map((r) => [
    r.scenario,
    r.metric,
    `${r.value} ${r.unit}`,
    r.baseline === null ? '—' : `${r.baseline} ${r.unit}`,
    r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
    r.target,
    met(r) ? 'yes' : 'no',
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)))
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n')
}

/** A target is "≥ N×" (on the ratio) or "< N unit" (on the value). */
function met(r) {
  const ratio = /^≥\s*([\d.]+)×$/.exec(r.target)
  if (ratio) return r.ratio !== null && r.ratio >= Number(ratio[1])
  const bound = /^<\s*([\d.]+)/.exec(r.target)
  if (bound) return r.value < Number(bound[1])
  return true
}
