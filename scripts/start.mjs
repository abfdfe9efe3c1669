// `npm start`: install what is missing, find or start PostgreSQL and Redis, generate the Prisma
// client, migrate, seed, then run the API, the stage workers and the webhook dispatcher as child
// processes with prefixed output. Ctrl-C (SIGINT) or SIGTERM stops them all; if one dies, all stop.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { canConnect, dropDatabase, ensureDatabase, ensureServices, ROOT } from './services.mjs'
import { divergedMigrations, ensureInstalled, log, migrateDeploy, prismaGenerate, runInherit, step } from './setup.mjs'

const APPS = [
  { name: 'api', entry: 'apps/api/src/main.ts' },
  { name: 'stage-worker', entry: 'apps/stage-worker/src/main.ts' },
  { name: 'webhook-dispatcher', entry: 'apps/webhook-dispatcher/src/main.ts' },
]
const COLORS = [36, 35, 33, 32, 34]

/** Demo workspaces and keys written by scripts/seed.ts, when present. */
function readDemo() {
  try {
    return JSON.parse(fs.readFileSync(path.resolve(ROOT, process.env.QUIRE_DEMO_FILE ?? '.data/demo.json'), 'utf8'))
  } catch {
    return null
  }
}

async function main() {
  await step('dependencies checked', () => ensureInstalled())
  const services = await step('services ready', () => ensureServices({ allowInstall: process.env.QUIRE_ALLOW_INSTALL !== '0' }))
  let stopping = false
  const children = new Map()

  const shutdown = async (code) => {
    if (stopping) return
    stopping = true
    for (const c of children.values()) c.kill('SIGTERM')
    const deadline = Date.now() + 10_000
    while (children.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    for (const c of children.values()) c.kill('SIGKILL')
    await services.stop()
    process.exit(code)
  }
  process.on('SIGINT', () => shutdown(130))
  process.on('SIGTERM', () => shutdown(143))

  try {
    const env = {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? 'development',
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
    }
    await step('prisma generate', () => prismaGenerate())

    // The init migration is regenerated while the schema evolves; a local database that recorded
    // an older version is rebuilt (only when we chose it, never a DATABASE_URL given to us).
    const diverged = await divergedMigrations(services.databaseUrl)
    if (diverged.length) {
      if (process.env.DATABASE_URL || process.env.QUIRE_NO_AUTO_RESET === '1') {
        log(`WARNING: applied migrations differ from prisma/migrations: ${diverged.join(', ')} (not resetting DATABASE_URL)`)
      } else {
        log(`local database has outdated migrations (${diverged.join(', ')}): dropping and recreating it`)
        await dropDatabase(services.databaseUrl)
        await ensureDatabase(services.databaseUrl)
      }
    }
    await step('database migrated', () => migrateDeploy(services.databaseUrl))

    const seed = path.join(ROOT, 'scripts', 'seed.ts')
    if (process.env.QUIRE_SKIP_SEED === '1') log('QUIRE_SKIP_SEED=1: skipping the seed')
    else if (fs.existsSync(seed)) await step('seeded', () => runInherit(process.execPath, ['--import', 'tsx', seed], { env }))
    else log('scripts/seed.ts does not exist yet: skipping the seed')

    const width = Math.max(...APPS.map((a) => a.name.length))
    APPS.forEach((app, i) => {
      const file = path.join(ROOT, app.entry)
      if (!fs.existsSync(file)) {
        log(`WARNING: ${app.entry} does not exist yet: not starting ${app.name}`)
        return
      }
      const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
      children.set(app.name, child)
      const tag = process.stdout.isTTY ? `\x1b[${COLORS[i % COLORS.length]}m${app.name.padEnd(width)}\x1b[0m |` : `${app.name.padEnd(width)} |`
      for (const stream of [child.stdout, child.stderr]) {
        readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
          ;(stream === child.stderr ? process.stderr : process.stdout).write(`${tag} ${line}\n`)
        })
      }
      // 'close' (not 'exit'): fires after the child's output has been read to the end.
      child.on('close', (code, signal) => {
        children.delete(app.name)
        if (stopping) return
        log(`${app.name} exited (${signal ?? code}); stopping everything`)
        shutdown(typeof code === 'number' && code !== 0 ? code : 1)
      })
    })
    if (!children.size) {
      log('no app entry files exist yet; nothing to run')
      return shutdown(0)
    }

    if (children.has('api')) {
      const port = Number(process.env.QUIRE_API_PORT || 3000)
      const deadline = Date.now() + 60_000
      while (!stopping && Date.now() < deadline && !(await canConnect('127.0.0.1', port, 300))) await new Promise((r) => setTimeout(r, 250))
      if (!stopping && Date.now() < deadline) {
        const base = `http://127.0.0.1:${port}`
        const token = process.env.QUIRE_ADMIN_TOKEN ?? (env.NODE_ENV === 'development' ? 'dev-admin-token' : '$QUIRE_ADMIN_TOKEN')
        const demo = readDemo()
        const lines = [
          '',
          `  Quire is running.`,
          `  API:        ${base}   OpenAPI: ${base}/v1/openapi.json?form=A   docs: ${base}/docs`,
          `  Dashboard:  ${base}/admin/queues   (Authorization: Bearer ${token})`,
          `  Database:   ${services.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
          `  Redis:      ${services.redisUrl}`,
        ]
        if (demo?.A && demo?.B) {
          lines.push(`  Demo keys:  Form A ${demo.A.api_key}`, `              Form B ${demo.B.api_key}`)
          lines.push(`  Try:        curl -s ${base}/v1/jobs -H "Authorization: Bearer ${demo.A.api_key}"`)
        } else {
          lines.push(`  Try:        curl -s "${base}/v1/openapi.json?form=A"`)
        }
        lines.push(`  Stop with Ctrl-C.`, '')
        console.log(lines.join('\n'))
      }
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
