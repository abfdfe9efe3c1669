// `npm run build` compiles each app and package on its own (tsc -b tsconfig.build.json), resolving @quire/* imports to
// the dist/ of the referenced project. A missing reference builds in the wrong order or not at all, and only on a clean
// checkout; this test names it instead.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const PROJECTS = ['apps', 'packages'].flatMap((group) =>
  readdirSync(path.join(ROOT, group))
    .filter((name) => statSync(path.join(ROOT, group, name, 'package.json'), { throwIfNoEntry: false }))
    .map((name) => `${group}/${name}`),
)
const readJson = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'))

/** Production sources of a project: src/**\/*.ts without tests and the generated Prisma client. */
function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !/\.(test|integration-test)\.ts$/.test(f) && !f.includes('generated'))
    .map((f) => path.join(ROOT, dir, f))
}

function importedPackages(project: string): string[] {
  const self = readJson(`${project}/package.json`).name
  const found = new Set<string>()
  for (const file of sources(`${project}/src`))
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(@quire\/[a-z-]+)'/g))
      if (m[1] !== self) found.add(m[1]!)
  return [...found].sort()
}

describe('build configuration', () => {
  it.each(PROJECTS)('%s references every @quire package it imports', (project) => {
    const refs = (readJson(`${project}/tsconfig.build.json`).references ?? []).map(
      (r: { path: string }) =>
        readJson(path.join(project, r.path.replace(/tsconfig\.build\.json$/, 'package.json'))).name,
    )
    expect(refs.sort()).toEqual(importedPackages(project))
  })

  it('tsconfig.build.json builds every app and package', () => {
    const refs = readJson('tsconfig.build.json').references.map((r: { path: string }) => path.dirname(r.path))
    expect(refs.map((r: string) => path.normalize(r)).sort()).toEqual([...PROJECTS].sort())
  })

  it.each(PROJECTS.filter((p) => p.startsWith('packages/')))(
    '%s exports its sources to development and dist/ to production',
    (project) => {
      expect(readJson(`${project}/package.json`).exports).toEqual({
        '.': { '@quire/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      })
    },
  )
})
