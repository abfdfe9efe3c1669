#!/usr/bin/env node
// @ts-check
// `npm run db:reset-migration`: replaces the `<timestamp>_init` migration in prisma/migrations with one
// generated from prisma/schema.prisma by `prisma migrate dev --name init`, run against a
// scratch database that is dropped afterwards. Hand-written migrations (any other name, e.g. CHECK
// constraints Prisma's schema language cannot express) are kept and renumbered to follow the new init. Use it while the schema is still being designed;
// once a release is out, add migrations with `npm run db:migrate:dev -- <name>` instead.
//
// Databases that recorded the previous init: `npm start` rebuilds its own local database
// automatically; `npm test` always uses a fresh one; any other database must be recreated
// (e.g. `DATABASE_URL=... node scripts/prisma/prisma.mjs migrate reset --force`).
import fs from 'node:fs'
import path from 'node:path'
import { dropDatabase, ensureServices, ROOT, withDatabase } from '../services.mjs'
import { prisma, prismaGenerate } from '../setup.mjs'

const dir = path.join(ROOT, 'prisma', 'migrations')
const backup = path.join(ROOT, '.data', `migrations-backup-${Date.now()}`)
const t0 = Date.now()

const services = await ensureServices({ database: null, redis: false, log: (m) => console.log(`[services] ${m}`) })
const server = process.env.DATABASE_URL ?? services.adminUrl
const scratchUrl = withDatabase(server, `quire_migration_scratch_${process.pid}`)
let ok = false
try {
  const before = fs.existsSync(dir)
    ? fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isDirectory())
    : []
  if (fs.existsSync(dir)) {
    fs.mkdirSync(path.dirname(backup), { recursive: true })
    fs.renameSync(dir, backup)
  }
  // migrate dev creates the scratch database, writes the migration, applies it and drops its shadow DB.
  await prisma(['migrate', 'dev', '--name', 'init'], { databaseUrl: scratchUrl, quiet: true })
  const after = fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isDirectory())
  if (after.length !== 1) throw new Error(`expected one migration, found: ${after.join(', ')}`)
  await prismaGenerate()
  ok = true
  const sql = (d, name) => fs.readFileSync(path.join(d, name, 'migration.sql'), 'utf8')
  const beforeInit = before.filter((n) => n.endsWith('_init'))
  const handWritten = before.filter((n) => !n.endsWith('_init')).sort()
  const initStamp = BigInt(after[0].split('_')[0])
  handWritten.forEach((n, i) => {
    const renamed = `${initStamp + BigInt(i + 1)}_${n.replace(/^\d+_/, '')}`
    fs.cpSync(path.join(backup, n), path.join(dir, renamed), { recursive: true })
  })
  if (beforeInit.length === 1 && sql(backup, beforeInit[0]) === sql(dir, after[0])) {
    // Same SQL: keep the old directory name so databases that applied it stay in step.
    fs.rmSync(dir, { recursive: true, force: true })
    fs.renameSync(backup, dir)
    console.log(`schema unchanged: kept ${before[0]} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
  } else {
    console.log(`replaced [${before.join(', ')}] with ${after[0]} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
  }
} catch (e) {
  console.error(`db:reset-migration failed: ${e.message}`)
  if (fs.existsSync(backup)) {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.renameSync(backup, dir)
    console.error('restored the previous prisma/migrations')
  }
} finally {
  if (ok && fs.existsSync(backup)) fs.rmSync(backup, { recursive: true, force: true })
  await dropDatabase(scratchUrl).catch((e) => console.error(`could not drop the scratch database: ${e.message}`))
  await services.stop()
}
process.exit(ok ? 0 : 1)
