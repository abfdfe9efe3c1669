import { defaultServerConditions } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'

// Run through `npm test` (scripts/dev/test.mjs), which provides a fresh migrated database and a
// queue prefix per run. `npm test -- --project unit` runs one project.
const exclude = [...configDefaults.exclude, '**/node_modules/**', '**/generated/**', '**/.scratch/**', '**/.data/**']

// Tests run the TypeScript sources: @quire/* packages resolve through their "@quire/source" export condition
// (`npm run build` output in dist/ is for production). Given to every project: projects do not inherit root options.
// Vitest's own default drops 'module' (packages such as the AWS SDK point it at extensionless ESM that Node cannot
// load); vitest also passes these conditions to its worker processes as --conditions.
const conditions = ['@quire/source', ...defaultServerConditions.filter((c) => c !== 'module')]
const sources = { resolve: { conditions }, ssr: { resolve: { conditions } } }

export default defineConfig({
  test: {
    projects: [
      {
        ...sources,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: [...exclude, 'tests/blackbox/**'],
          // Unit files run side by side on two cores and some read real PDFs, DOCX bombs and images: on a slow host
          // vitest's 5 s default failed a test that takes 2.4 s alone. A hang still fails, later.
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        ...sources,
        test: {
          name: 'integration',
          include: ['**/*.integration-test.ts'],
          exclude,
          // One file at a time: the files share the run's database and Redis prefix.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...sources,
        test: {
          name: 'blackbox',
          include: ['tests/blackbox/**/*.test.ts'],
          exclude,
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
