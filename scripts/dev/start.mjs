// @ts-check
// `npm start`: install what is missing, find or start PostgreSQL and Redis, generate the Prisma
// client, migrate, seed, then run the API, the stage workers and the webhook dispatcher as child
// processes with prefixed output. Ctrl-C (SIGINT) or SIGTERM stops them all. An app that crashes is restarted; one
// that refuses its configuration (exit code 78) stops them all.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import readline from 'node:readline'
import { pathToFileURL } from 'node:url'
import { afterAppExit, apiPortFromEnv } from './app-exit.mjs'
import { canConnect, dropDatabase, ensureDatabase, ensureServices, ROOT } from './services.mjs'
import {
  divergedMigrations,
  buildReviewDesk,
  ensureInstalled,
  log,
  migrateDeploy,
  onParentExit,
  prismaGenerate,
  runInherit,
  step,
} from './setup.mjs'

const APPS = [
  { name: 'api', entry: 'apps/api/src/main.ts' },
  { name: 'stage-worker', entry: 'apps/stage-worker/src/main.ts' },
  { name: 'webhook-dispatcher', entry: 'apps/webhook-dispatcher/src/main.ts' },
]
const COLORS = [36, 35, 33, 32, 34]

/**
 * An app's own Node flags, `quire.nodeFlags` in its package.json (the API's young generation, see the README's
 * "Operating"); the Dockerfile and docker-compose.yml give the same.
 */
const nodeFlagsOf = (name) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'apps', name, 'package.json'), 'utf8')).quire?.nodeFlags ?? []

/** Demo workspaces and keys written by scripts/seed.ts, when present. */
function readDemo() {
  try {
    return JSON.parse(fs.readFileSync(path.resolve(ROOT, process.env.QUIRE_DEMO_FILE ?? '.data/demo.json'), 'utf8'))
  } catch {
    return null
  }
}

/** Writes a one-page invoice PDF for the banner's curl (pdf-lib is a dependency), once. */
async function demoPdf() {
  const file = path.join(ROOT, '.data', 'demo-invoice.pdf')
  if (fs.existsSync(file)) return file
  try {
    const require = createRequire(path.join(ROOT, 'package.json'))
    const { PDFDocument, StandardFonts } = await import(pathToFileURL(require.resolve('pdf-lib')).href)
    const doc = await PDFDocument.create()
    const page = doc.addPage([595, 842])
    const font = await doc.embedFont(StandardFonts.Helvetica)
    const lines = [
      'ACME Supplies Ltd',
      'INVOICE',
      'Invoice number: INV-1001',
      'Invoice date: 2024-03-15',
      'Bill to: Example Corp',
      'Widgets   10 x 12.50',
      'Subtotal: 125.00',
      'Tax: 25.00',
      'Total due: EUR 150.00',
    ]
    lines.forEach((text, i) => page.drawText(text, { x: 50, y: 780 - i * 22, size: 12, font }))
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, await doc.save())
    return file
  } catch (e) {
    log(`could not write the demo PDF (${e.message}); the curl below needs a PDF of your own`)
    return 'invoice.pdf'
  }
}

/** What `npm start` prints once the API answers: URLs, demo keys, curls that work as printed. */
async function banner({ base, env, services }) {
  // A token the user set is not echoed; without one the API generated one into .data/admin-token (shown here).
  const tokenFile = path.resolve(ROOT, process.env.QUIRE_DATA_DIR ?? '.data', 'admin-token')
  let token = '$QUIRE_ADMIN_TOKEN'
  if (!process.env.QUIRE_ADMIN_TOKEN && env.NODE_ENV !== 'production' && fs.existsSync(tokenFile)) {
    token = fs.readFileSync(tokenFile, 'utf8').trim()
  }
  const demo = readDemo()
  const lines = [
    '',
    `  Quire is running.`,
    `  Base URL:   ${base}   (health: ${base}/healthz)`,
    `  Docs:       ${base}/docs   OpenAPI: ${base}/v1/openapi.json?form=A (or form=B)`,
    `  Dashboard:  ${base}/admin/queues   (Authorization: Bearer ${token}; in a browser: any user, password ${token})`,
    process.env.QUIRE_ADMIN_TOKEN
      ? `  Admin:      the token in QUIRE_ADMIN_TOKEN`
      : `  Admin:      token kept in ${path.relative(ROOT, tokenFile)} (generated; set QUIRE_ADMIN_TOKEN to choose one)`,
    `  Listening:  ${env.QUIRE_HOST ?? env.QUIRE_API_HOST ?? '127.0.0.1'} only (set QUIRE_HOST=0.0.0.0 to serve the network)`,
    `  Database:   ${services.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
    `  Redis:      ${services.redisUrl}`,
  ]
  if (demo?.A && demo?.B) {
    const pdf = await demoPdf()
    lines.push(
      `  Form A:     key ${demo.A.api_key}   pipeline_id ${demo.A.pipeline_id} (required on submit)`,
      `  Form B:     key ${demo.B.api_key}   (default pipeline ${demo.B.pipeline_id})`,
      `  Try:        curl -s -H "X-API-Key: ${demo.A.api_key}" -F pipeline_id=${demo.A.pipeline_id} -F file=@${pdf} ${base}/v1/jobs`,
      `              curl -s -H "X-API-Key: ${demo.B.api_key}" -F files=@${pdf} ${base}/v1/jobs`,
      `              then: curl -s -H "X-API-Key: <key>" "${base}/v1/jobs/<job id>"   (Form B: add ?include=stages,result)`,
    )
  } else {
    lines.push(`  Demo keys:  none (no seed: see .data/demo.json, or create them with the admin API in README.md)`)
    lines.push(`  Try:        curl -s ${base}/healthz`)
  }
  lines.push(`  Stop with Ctrl-C.`, '')
  return lines.join('\n')
}

async function main() {
  // Signal handlers first: a Ctrl-C during the set-up must still stop what the set-up started
  // (the embedded PostgreSQL runs in its own process group and would otherwise be left running).
  let stopping = false
  let services = null
  let exitCode = null
  const children = new Map()

  const shutdown = async (code) => {
    if (stopping) return
    stopping = true
    exitCode = code
    for (const c of children.values()) c.kill('SIGTERM')
    const deadline = Date.now() + 10_000
    while (children.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    for (const c of children.values()) c.kill('SIGKILL')
    if (services) {
      await services.stop()
      process.exit(code)
    }
    // Still inside ensureServices: main() stops what it started as soon as it returns.
  }
  process.on('SIGINT', () => shutdown(130))
  process.on('SIGTERM', () => shutdown(143))
  process.on('SIGHUP', () => shutdown(129))
  onParentExit(() => {
    log('the parent process (npm) exited: stopping everything')
    shutdown(143)
  })

  // Something else on the API port would answer for us (and the API would die with EADDRINUSE). A port that is not
  // one (null) is left to the API, which reports it with every other bad variable.
  const apiPort = apiPortFromEnv(process.env.QUIRE_API_PORT)
  if (apiPort !== null && (await canConnect('127.0.0.1', apiPort, 500))) {
    console.error(`port ${apiPort} is already in use (another Quire?): stop it or set QUIRE_API_PORT`)
    process.exit(1)
  }

  await step('dependencies checked', () => ensureInstalled())
  if (stopping) process.exit(exitCode)
  services = await step('services ready', () =>
    ensureServices({ allowInstall: process.env.QUIRE_ALLOW_INSTALL !== '0' }),
  )
  if (stopping) {
    await services.stop()
    process.exit(exitCode)
  }

  try {
    const env = {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? 'development',
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
    }
    await step('prisma generate', () => prismaGenerate())
    await step('review desk built', () => buildReviewDesk())

    // The init migration is regenerated while the schema evolves; a local database that recorded
    // an older version is rebuilt (only when we chose it, never a DATABASE_URL given to us).
    const diverged = await divergedMigrations(services.databaseUrl)
    if (diverged.length) {
      if (process.env.DATABASE_URL || process.env.QUIRE_NO_AUTO_RESET === '1') {
        log(
          `WARNING: applied migrations differ from prisma/migrations: ${diverged.join(', ')} (not resetting DATABASE_URL)`,
        )
      } else {
        log(`local database has outdated migrations (${diverged.join(', ')}): dropping and recreating it`)
        await dropDatabase(services.databaseUrl)
        await ensureDatabase(services.databaseUrl)
      }
    }
    await step('database migrated', () => migrateDeploy(services.databaseUrl))

    const seed = path.join(ROOT, 'scripts', 'dev', 'seed.ts')
    if (process.env.QUIRE_SKIP_SEED === '1') log('QUIRE_SKIP_SEED=1: skipping the seed')
    else
      await step('seeded', () =>
        runInherit(process.execPath, ['--conditions=@quire/source', '--import', 'tsx', seed], { env }),
      )

    const width = Math.max(...APPS.map((a) => a.name.length))
    // A crashed app is restarted with backoff while the others keep running; one that refuses its configuration stops
    // everything (app-exit.mjs). Ctrl-C / SIGTERM still stops everything.
    const launch = (app, i, restarts = 0) => {
      const file = path.join(ROOT, app.entry)
      const startedAt = Date.now()
      const child = spawn(
        process.execPath,
        [...nodeFlagsOf(app.name), '--conditions=@quire/source', '--import', 'tsx', file],
        {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      children.set(app.name, child)
      const tag = process.stdout.isTTY
        ? `\x1b[${COLORS[i % COLORS.length]}m${app.name.padEnd(width)}\x1b[0m |`
        : `${app.name.padEnd(width)} |`
      for (const stream of [child.stdout, child.stderr]) {
        readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
          ;(stream === child.stderr ? process.stderr : process.stdout).write(`${tag} ${line}\n`)
        })
      }
      // 'close' (not 'exit'): fires after the child's output has been read to the end.
      child.on('close', (code, signal) => {
        if (children.get(app.name) === child) children.delete(app.name)
        if (stopping) return
        const next = afterAppExit({ code, upMs: Date.now() - startedAt, restarts })
        if (next.action === 'stop') {
          log(
            `${app.name} refused its configuration (exit code ${code}, see its message above); a restart cannot fix ` +
              'that: stopping everything',
          )
          shutdown(next.exitCode)
          return
        }
        log(
          `${app.name} exited (${signal ?? code}); restarting it in ${next.delayMs / 1000} s (restart ${next.attempt + 1})`,
        )
        setTimeout(() => {
          if (!stopping) launch(app, i, next.attempt + 1)
        }, next.delayMs)
      })
    }
    APPS.forEach((app, i) => {
      if (!fs.existsSync(path.join(ROOT, app.entry))) {
        log(`WARNING: ${app.entry} does not exist yet: not starting ${app.name}`)
        return
      }
      launch(app, i)
    })
    if (!children.size) {
      log('no app entry files exist yet; nothing to run')
      return shutdown(0)
    }

    if (children.has('api') && apiPort !== null) {
      const deadline = Date.now() + 60_000
      while (!stopping && Date.now() < deadline && !(await canConnect('127.0.0.1', apiPort, 300)))
        await new Promise((r) => setTimeout(r, 250))
      if (stopping) return
      if (Date.now() >= deadline)
        log(`WARNING: the API is not listening on port ${apiPort} after 60 s (see its output above)`)
      else console.log(await banner({ base: `http://127.0.0.1:${apiPort}`, env, services }))
    }
  } catch (e) {
    console.error(e.message ?? e)
    await shutdown(1)
  }
}

main().catch((e) => {
  console.error(e?.stack ?? e)
  process.exit(1)
})
