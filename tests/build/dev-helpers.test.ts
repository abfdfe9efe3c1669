// Development helpers (scripts/dev: npm start / npm test set-up, the offline Prisma CLI, container tooling) live apart
// from the product and change nothing on the host that the user did not ask for.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const files = (dir: string, keep: (f: string) => boolean) =>
  readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => keep(f) && !f.includes('node_modules') && !f.includes('dist/') && !f.includes('generated'))
    .map((f) => path.join(dir, f))
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8')

describe('development helpers', () => {
  const dev = files('scripts/dev', (f) => /\.(mjs|ts|sh)$/.test(f))

  it('never alter an existing role or password; the only role they create is Quire own', () => {
    for (const f of dev) {
      expect(read(f), f).not.toMatch(/ALTER\s+(USER|ROLE)/i)
      for (const m of read(f).matchAll(/CREATE\s+(?:ROLE|USER)\s+(\S+)/gi)) expect(m[1], f).toMatch(/QUIRE_ROLE|quire/)
    }
  })

  it('are not imported by the product (apps, packages)', () => {
    const product = [...files('apps', (f) => f.endsWith('.ts')), ...files('packages', (f) => f.endsWith('.ts'))]
    for (const f of product) expect(read(f), f).not.toMatch(/scripts\/dev|from '\.\.\/.*scripts\//)
  })

  it('production commands (Dockerfile, compose) run compiled JavaScript, never tsx or the Prisma CLI shim', () => {
    const commands = ['Dockerfile', 'docker-compose.yml'].flatMap((f) =>
      read(f)
        .split('\n')
        .filter((line) => /^\s*(CMD|command:)/.test(line) && !line.includes('redis-server')),
    )
    expect(commands.length).toBeGreaterThanOrEqual(6)
    // Node's own flags may come first (the API's young generation).
    for (const c of commands)
      expect(c).toMatch(
        /^\s*(CMD|command:)\s*\["node", ("--[a-z-]+=[0-9a-z]+", )*"(apps|packages)\/[a-z-]+\/dist\/[a-z/.-]+\.js"/,
      )
    for (const c of commands) expect(c).not.toMatch(/tsx|scripts\/dev|\.ts"/)
  })

  it('the Dockerfile copies every workspace manifest before installing (a missing one is not linked)', () => {
    const manifests = ['apps', 'packages'].flatMap((group) =>
      readdirSync(path.join(ROOT, group)).map((name) => `${group}/${name}/package.json`),
    )
    for (const m of manifests) expect(read('Dockerfile')).toContain(`COPY ${m} ${path.dirname(m)}/`)
  })
})
