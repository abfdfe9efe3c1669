// Production migrations without the Prisma CLI (which needs a native schema engine downloaded at run time). Applies
// prisma/migrations/<name>/migration.sql in name order, each in its own transaction together with its row in Prisma's
// `_prisma_migrations` table, so `prisma migrate status` / `migrate deploy` / `migrate dev` agree with what ran here:
// same table, same checksum (sha256 of the file), same advisory lock (Prisma's 72707369), so a Prisma CLI and this
// migrator never run at once, and neither do two of these (scaled one-shot containers).
import { createHash, randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'

/** One migration directory. */
export type Migration = { name: string; sql: string; checksum: string }

/** Options for {@link applyMigrations}. */
export type ApplyMigrationsOptions = {
  /** Target database; Prisma's `?schema=` is honoured (created when missing, like `prisma migrate deploy`). */
  databaseUrl: string
  /** The directory holding `<name>/migration.sql` (prisma/migrations). */
  migrationsDir: string
  log?: (message: string) => void
}

export type ApplyMigrationsResult = {
  /** Names applied by this call, in order. */
  applied: string[]
  /** Migrations found already applied. */
  alreadyApplied: number
  /** Applied migrations whose file changed since, or that no longer exist locally (as `prisma migrate deploy`, not fatal). */
  warnings: string[]
}

/** The lock id the Prisma schema engine takes for migrations (schema-engine sql-migration-connector). */
const PRISMA_MIGRATE_LOCK = 72707369

/** Prisma's own definition of its history table. */
const HISTORY_TABLE_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Reads `<dir>/<name>/migration.sql` for every directory, sorted by name (Prisma's timestamp prefixes). */
export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory())
    .sort()
    .flatMap((name) => {
      const file = path.join(dir, name, 'migration.sql')
      if (!statSync(file, { throwIfNoEntry: false })) return []
      const bytes = readFileSync(file)
      return [{ name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') }]
    })
}

/** Splits `?schema=` off the URL (pg does not know it). */
function target(databaseUrl: string): { connectionString: string; database: string; schema: string } {
  const u = new URL(databaseUrl)
  const schema = u.searchParams.get('schema') ?? 'public'
  u.searchParams.delete('schema')
  return { connectionString: u.toString(), database: decodeURIComponent(u.pathname.slice(1)), schema }
}

async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {}) // a dropped connection fails the query in progress; nothing else to do
  await client.connect()
  return client
}

/** Connects to the target database, creating it first when it does not exist (SQLSTATE 3D000). */
async function connectCreatingDatabase(connectionString: string, database: string, log: (m: string) => void) {
  try {
    return await connect(connectionString)
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err
  }
  const maintenance = new URL(connectionString)
  maintenance.pathname = '/postgres'
  const admin = await connect(maintenance.toString())
  try {
    log(`creating database ${database}`)
    await admin.query(`CREATE DATABASE ${quoteIdent(database)}`)
  } catch (err) {
    // 42P04: created meanwhile by another migrator.
    if ((err as { code?: string }).code !== '42P04') throw err
  } finally {
    await admin.end()
  }
  return connect(connectionString)
}

type HistoryRow = { migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }

/**
 * Applies every migration of `migrationsDir` not yet recorded in `_prisma_migrations`. A migration that fails is
 * rolled back whole (its SQL and its history row), so the database stays at the last good migration and the next run
 * tries it again; the error names the migration and PostgreSQL's message.
 */
export async function applyMigrations(opts: ApplyMigrationsOptions): Promise<ApplyMigrationsResult> {
  const log = opts.log ?? (() => {})
  const migrations = readMigrations(opts.migrationsDir)
  const { connectionString, database, schema } = target(opts.databaseUrl)
  const client = await connectCreatingDatabase(connectionString, database, log)
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`)
    await client.query(`SET search_path TO ${quoteIdent(schema)}`)
    await client.query(HISTORY_TABLE_DDL)
    const { rows } = await client.query<HistoryRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    )
    const live = rows.filter((r) => r.rolled_back_at === null)
    // What `prisma migrate deploy` refuses too (P3009): a migration that started and never finished.
    const failed = live.filter((r) => r.finished_at === null).map((r) => r.migration_name)
    if (failed.length)
      throw new Error(
        `failed migrations are recorded in ${database}: ${failed.join(', ')}. Resolve them first ` +
          '(`prisma migrate resolve --rolled-back <name>` after fixing the database by hand).',
      )
    const applied = new Map(live.map((r) => [r.migration_name, r.checksum]))
    const local = new Set(migrations.map((m) => m.name))
    const warnings = [
      ...migrations
        .filter((m) => applied.has(m.name) && applied.get(m.name) !== m.checksum)
        .map((m) => `migration ${m.name} was modified after it was applied`),
      ...[...applied.keys()].filter((n) => !local.has(n)).map((n) => `applied migration ${n} is not in the directory`),
    ]
    for (const w of warnings) log(`warning: ${w}`)

    const done: string[] = []
    for (const m of migrations.filter((m) => !applied.has(m.name))) {
      const t0 = Date.now()
      await client.query('BEGIN')
      try {
        // Simple query protocol: the whole file, every statement, in this transaction.
        await client.query(m.sql)
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name],
        )
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw new Error(`migration ${m.name} failed and was rolled back: ${(err as Error).message}`, { cause: err })
      }
      done.push(m.name)
      log(`applied ${m.name} (${Date.now() - t0} ms)`)
    }
    return { applied: done, alreadyApplied: migrations.length - done.length, warnings }
  } finally {
    // Ending the session releases the advisory lock too.
    await client.end().catch(() => {})
  }
}
