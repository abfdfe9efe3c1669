// @ts-check
// `npm test [-- vitest args]`: the same set-up as `npm start`, then a fresh, uniquely named
// database (migrated) and queue prefix for this run, `vitest run`, and clean-up afterwards.
// Environment given to the tests:
//   DATABASE_URL              the migrated test database of this run
//   TEST_DATABASE_ADMIN_URL   same server, `postgres` database: tests may CREATE DATABASE there; name
//                             them with the QUIRE_TEST_DB_PREFIX prefix and they are dropped afterwards
//   QUIRE_TEST_DB_PREFIX      e.g. quire_test_1234_lx2k9a
//   REDIS_URL, QUIRE_QUEUE_PREFIX (test<random>; its keys are deleted afterwards)
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureDatabase, ensureServices, ROOT, withDatabase } from './services.mjs'
import {
  buildReviewDesk,
  ensureChromium,
  ensureInstalled,
  log,
  migrateDeploy,
  onParentExit,
  prismaGenerate,
  step,
} from './setup.mjs'

const require = createRequire(path.join(ROOT, 'package.json'))

async function importDep(name) {
  const mod = await import(pathToFileURL(require.resolve(name)).href)
  return mod.default ?? mod
}

async function dropTestDatabases(adminUrl, prefix) {
  const pg = await importDep('pg')
  const u = new URL(adminUrl)
  u.searchParams.delete('schema')
  const client = new pg.Client({ connectionString: u.toString() })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${prefix}%`])
    for (const { datname } of rows)
      await client.query(`DROP DATABASE IF EXISTS "${datname.replace(/"/g, '""')}" WITH (FORCE)`)
    return rows.length
  } finally {
    await client.end().catch(() => {})
  }
}

async function deleteRedisKeys(redisUrl, prefix) {
  const { Redis } = await import(pathToFileURL(require.resolve('ioredis')).href)
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  let n = 0
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length) n += await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
  return n
}

async function main() {
  const vitestArgs = process.argv.slice(2)
  // Handlers before the set-up: a Ctrl-C while the embedded PostgreSQL starts must still stop it.
  let code = 1
  let child = null
  let interrupted = false
  const onSignal = (sig) => {
    interrupted = true
    if (child) child.kill(sig)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('SIGHUP', onSignal)
  onParentExit(() => {
    log('the parent process (npm) exited: stopping the tests and cleaning up')
    onSignal('SIGTERM')
  })
  await step('dependencies checked', () => ensureInstalled())
  await step('chromium checked', () => ensureChromium({ allowInstall: process.env.QUIRE_ALLOW_INSTALL !== '0' }))
  const services = await step('services ready', () =>
    ensureServices({ database: null, allowInstall: process.env.QUIRE_ALLOW_INSTALL !== '0' }),
  )

  const prefix = `quire_test_${process.pid}_${Date.now().toString(36)}`
  const serverUrl = process.env.DATABASE_URL ?? services.adminUrl
  const databaseUrl = withDatabase(serverUrl, prefix)
  const adminUrl = withDatabase(serverUrl, 'postgres')
  const queuePrefix = `{test${randomBytes(4).toString('hex')}}`

  try {
    if (interrupted) throw new Error('interrupted')
    await step('prisma generate', () => prismaGenerate())
    await step('review desk built', () => buildReviewDesk())
    await ensureDatabase(databaseUrl)
    await step(`test database ${prefix} migrated`, () => migrateDeploy(databaseUrl))
    if (interrupted) throw new Error('interrupted')

    const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs')
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      TEST_DATABASE_ADMIN_URL: adminUrl,
      QUIRE_TEST_DB_PREFIX: prefix,
      REDIS_URL: services.redisUrl,
      QUIRE_QUEUE_PREFIX: queuePrefix,
    }
    log(`vitest run ${vitestArgs.join(' ')}`.trim())
    code = await new Promise((resolve) => {
      child = spawn(process.execPath, [vitest, 'run', ...vitestArgs], { cwd: ROOT, env, stdio: 'inherit' })
      child.on('exit', (c, signal) => resolve(c ?? (signal === 'SIGINT' ? 130 : 1)))
      child.on('error', (e) => {
        console.error(e)
        resolve(1)
      })
    })
  } catch (e) {
    console.error(e.message ?? e)
    code = code || 1
  } finally {
    if (process.env.QUIRE_KEEP_TEST_DB === '1') log(`keeping test database ${databaseUrl}`)
    else await dropTestDatabases(adminUrl, prefix).catch((e) => log(`could not drop test databases: ${e.message}`))
    if (services.redisUrl)
      await deleteRedisKeys(services.redisUrl, queuePrefix).catch((e) =>
        log(`could not delete Redis keys: ${e.message}`),
      )
    await services.stop()
  }
  process.exit(code)
}

main().catch((e) => {
  console.error(e?.stack ?? e)
  process.exit(1)
})
