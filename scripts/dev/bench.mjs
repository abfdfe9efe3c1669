// @ts-check
// `npm run bench [-- <name>...]`: timing goals live here, not in the tests. Sets up like `npm test` (services, a
// fresh migrated database, a queue prefix of its own), then runs each scenario in bench/*.bench.ts (or those whose
// names contain one of the arguments) as its own process, and drops the database afterwards. Each scenario prints
// its own figures next to its baseline from the same run.
// Environment given to scenarios: DATABASE_URL, REDIS_URL, QUIRE_QUEUE_PREFIX; scenario knobs are read from
// BENCH_* variables (see each scenario's header).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { dropDatabase, ensureDatabase, ensureServices, ROOT, withDatabase } from './services.mjs'
import { ensureInstalled, log, migrateDeploy, prismaGenerate, step } from './setup.mjs'

const wanted = process.argv.slice(2)
const dir = path.join(ROOT, 'bench')
const scenarios = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') || f.endsWith('.bench.mjs'))
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
const databaseUrl = withDatabase(services.adminUrl, `quire_bench_${process.pid}_${Date.now().toString(36)}`)
let failed = 0
try {
  await step('prisma generate', () => prismaGenerate())
  await ensureDatabase(databaseUrl)
  await step('bench database migrated', () => migrateDeploy(databaseUrl))
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL: services.redisUrl ?? '',
    QUIRE_QUEUE_PREFIX: `bench${randomBytes(4).toString('hex')}`,
  }
  for (const file of scenarios) {
    log(`bench ${file}`)
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, ['--conditions=@quire/source', '--import', 'tsx', path.join(dir, file)], {
        cwd: ROOT,
        env,
        stdio: 'inherit',
      })
      child.on('exit', (c) => resolve(c ?? 1))
      child.on('error', () => resolve(1))
    })
    if (code !== 0) {
      failed++
      log(`bench ${file} failed (exit ${code})`)
    }
  }
} finally {
  await dropDatabase(databaseUrl).catch((e) => log(`could not drop the bench database: ${e.message}`))
  await services.stop()
}
process.exit(failed ? 1 : 0)
