// `node packages/db/dist/migrate/migrate.main.js` (the compose `migrate` service; `npm run db:migrate` runs the
// source): applies prisma/migrations to DATABASE_URL and exits 0, or names the failing migration and exits 1.
// An entry point like the apps' config.ts: the only reader of the environment here.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyMigrations } from './apply-migrations.ts'

// src/migrate/ and dist/migrate/ sit at the same depth: both reach the repository's (or image's) prisma/migrations.
const DEFAULT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../prisma/migrations')

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('migrate: DATABASE_URL is not set')
  process.exit(2)
}
const migrationsDir = process.env.QUIRE_MIGRATIONS_DIR ?? DEFAULT_DIR
const t0 = Date.now()
try {
  const r = await applyMigrations({ databaseUrl, migrationsDir, log: (m) => console.log(`migrate: ${m}`) })
  console.log(
    `migrate: ${r.applied.length} applied, ${r.alreadyApplied} already applied (${Date.now() - t0} ms, ${migrationsDir})`,
  )
} catch (err) {
  console.error(`migrate: ${(err as Error).message}`)
  process.exit(1)
}
