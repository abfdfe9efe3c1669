import { configDefaults, defineConfig } from 'vitest/config'

// Run through `npm test` (scripts/test.mjs), which provides a fresh migrated database and a
// queue prefix per run. `npm test -- --project unit` runs one project.
const exclude = [...configDefaults.exclude, '**/node_modules/**', '**/generated/**', '**/.scratch/**', '**/.data/**']

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: [...exclude, 'tests/blackbox/**'],
        },
      },
      {
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
