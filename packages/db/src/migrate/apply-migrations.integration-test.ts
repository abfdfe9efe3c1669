import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { applyMigrations, readMigrations } from './apply-migrations.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..')
const MIGRATIONS = path.join(ROOT, 'prisma', 'migrations')
const adminUrl = process.env.TEST_DATABASE_ADMIN_URL
const prefix = process.env.QUIRE_TEST_DB_PREFIX
if (!adminUrl || !prefix) throw new Error('run through `npm test` (TEST_DATABASE_ADMIN_URL, QUIRE_TEST_DB_PREFIX)')

let n = 0
/** A database name of this run that does not exist yet (`npm test` drops every database with the run's prefix). */
function freshUrl(query = ''): string {
  const u = new URL(adminUrl!)
  u.pathname = `/${prefix}_mig${++n}`
  return `${u.toString()}${query}`
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const u = new URL(url)
  const schema = u.searchParams.get('schema')
  u.searchParams.delete('schema')
  const client = new pg.Client({ connectionString: u.toString() })
  await client.connect()
  try {
    if (schema) await client.query(`SET search_path TO "${schema}"`)
    return (await client.query<T>(sql)).rows
  } finally {
    await client.end()
  }
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'quire-migrations-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmp, 'set-'))
  for (const [name, sql] of Object.entries(files)) {
    mkdirSync(path.join(dir, name))
    writeFileSync(path.join(dir, name, 'migration.sql'), sql)
  }
  return dir
}

type HistoryRow = { migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }

describe('applyMigrations', () => {
  it('creates the database, applies prisma/migrations in order and records them as Prisma does', async () => {
    const url = freshUrl()
    const r = await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS })
    const local = readMigrations(MIGRATIONS)
    expect(r.applied).toEqual(local.map((m) => m.name))
    const rows = await query<HistoryRow>(url, 'SELECT * FROM "_prisma_migrations" ORDER BY migration_name')
    expect(rows.map((x) => x.migration_name)).toEqual(local.map((m) => m.name))
    for (const row of rows) {
      const file = readFileSync(path.join(MIGRATIONS, row.migration_name, 'migration.sql'))
      expect(row.checksum).toBe(createHash('sha256').update(file).digest('hex'))
      expect(row.finished_at).toBeInstanceOf(Date)
      expect(row.applied_steps_count).toBe(1)
    }
    // The schema is there: the ledger's CHECK constraints come from the second, hand-written migration.
    const [t] = await query<{ n: number }>(url, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'jobs'")
    expect(t!.n).toBe(1)

    const again = await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS })
    expect(again).toEqual({ applied: [], alreadyApplied: local.length, warnings: [] })
  })

  it('the Prisma CLI reads the history as its own: migrate status reports the database up to date', async () => {
    const url = freshUrl()
    await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS })
    const r = spawnSync(
      process.execPath,
      [path.join(ROOT, 'scripts', 'dev', 'prisma', 'prisma.mjs'), 'migrate', 'status'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: url },
        encoding: 'utf8',
      },
    )
    expect(`${r.stdout}${r.stderr}`).toContain('Database schema is up to date')
    expect(r.status).toBe(0)
  })

  it('honours ?schema= like Prisma: the tables and the history live in that schema', async () => {
    const url = freshUrl('?schema=tenant_x')
    const dir = migrationsDir({ '001_a': 'CREATE TABLE a (id int);' })
    await applyMigrations({ databaseUrl: url, migrationsDir: dir })
    const rows = await query<{ table_schema: string; table_name: string }>(
      url,
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('a', '_prisma_migrations') ORDER BY 2",
    )
    expect(rows).toEqual([
      { table_schema: 'tenant_x', table_name: '_prisma_migrations' },
      { table_schema: 'tenant_x', table_name: 'a' },
    ])
  })

  it('rolls a failing migration back whole and stops there; the next run applies it once fixed', async () => {
    const url = freshUrl()
    const dir = migrationsDir({
      '001_ok': 'CREATE TABLE one (id int);',
      '002_broken': 'CREATE TABLE two (id int);\nINSERT INTO nowhere VALUES (1);',
      '003_later': 'CREATE TABLE three (id int);',
    })
    await expect(applyMigrations({ databaseUrl: url, migrationsDir: dir })).rejects.toThrow(
      /migration 002_broken failed and was rolled back: relation "nowhere" does not exist/,
    )
    const tables = async () =>
      (
        await query<{ t: string }>(url, "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
      ).map((r) => r.t)
    expect(await tables()).toEqual(['_prisma_migrations', 'one'])
    const names = async () =>
      (await query<HistoryRow>(url, 'SELECT migration_name FROM "_prisma_migrations" ORDER BY 1')).map(
        (r) => r.migration_name,
      )
    expect(await names()).toEqual(['001_ok'])

    writeFileSync(path.join(dir, '002_broken', 'migration.sql'), 'CREATE TABLE two (id int);')
    const r = await applyMigrations({ databaseUrl: url, migrationsDir: dir })
    expect(r.applied).toEqual(['002_broken', '003_later'])
    expect(await tables()).toEqual(['_prisma_migrations', 'one', 'three', 'two'])
  })

  it('two migrators at once (scaled one-shot containers) apply each migration exactly once', async () => {
    const url = freshUrl()
    const dir = migrationsDir({
      '001_a': 'CREATE TABLE a (id int);',
      '002_b': 'SELECT pg_sleep(0.3); CREATE TABLE b (id int);',
    })
    // Create the database first: CREATE DATABASE itself is not under the advisory lock.
    await applyMigrations({ databaseUrl: url, migrationsDir: migrationsDir({}) })
    const [x, y] = await Promise.all([
      applyMigrations({ databaseUrl: url, migrationsDir: dir }),
      applyMigrations({ databaseUrl: url, migrationsDir: dir }),
    ])
    expect([...x.applied, ...y.applied].sort()).toEqual(['001_a', '002_b'])
    const [c] = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM "_prisma_migrations"')
    expect(c!.n).toBe(2)
  })

  it('warns about an applied migration whose file changed, and refuses one that never finished', async () => {
    const url = freshUrl()
    const dir = migrationsDir({ '001_a': 'CREATE TABLE a (id int);' })
    await applyMigrations({ databaseUrl: url, migrationsDir: dir })
    writeFileSync(path.join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id bigint);')
    const r = await applyMigrations({ databaseUrl: url, migrationsDir: dir })
    expect(r.warnings).toEqual(['migration 001_a was modified after it was applied'])

    // What a crashed `prisma migrate deploy` leaves behind: a row without finished_at.
    await query(url, `INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ('x', 'y', '002_crashed')`)
    await expect(applyMigrations({ databaseUrl: url, migrationsDir: dir })).rejects.toThrow(
      /failed migrations are recorded in .*: 002_crashed/,
    )
  })
})
