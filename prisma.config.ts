import { defineConfig } from 'prisma/config'

// Run the CLI through `node scripts/dev/prisma/prisma.mjs ...` (npm run db:*): it supplies the offline
// schema engine. env('DATABASE_URL') would throw when the variable is unset, even for `generate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/quire',
    ...(process.env.SHADOW_DATABASE_URL ? { shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL } : {}),
  },
})
