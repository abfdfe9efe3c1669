// Form A and Form B differ only inside packages/forms (the FormProfile and what it is built from) and where a
// declaration lists a value per form (`byForm({A, B})`). Anywhere else, code asks the profile; it never compares
// forms. This test greps the sources for such comparisons.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
// packages/client is the published client: a caller picks a form there (createClient({form})), not the server.
const ALLOWED = [path.join('packages', 'forms') + path.sep, path.join('packages', 'client') + path.sep]

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'generated' || name === 'dist') continue
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) sources(full, out)
    else if (/\.(ts|mts|mjs)$/.test(name) && !/\.(test|integration-test|test-helper)\.ts$/.test(name)) out.push(full)
  }
  return out
}

/** `form === 'A'`, `apiForm !== "B"`, `'B' === x.apiForm`, `form == 'A' ?` … in any spelling. */
const COMPARISON = /(===?|!==?)\s*['"`][AB]['"`]|['"`][AB]['"`]\s*(===?|!==?)/

describe('no branching on the API form outside packages/forms', () => {
  it('finds no comparison with the form names in apps/ and packages/ (except packages/forms)', () => {
    const offenders: string[] = []
    for (const file of [...sources(path.join(ROOT, 'apps')), ...sources(path.join(ROOT, 'packages'))]) {
      const rel = path.relative(ROOT, file)
      if (ALLOWED.some((a) => rel.startsWith(a))) continue
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (COMPARISON.test(line)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`)
        })
    }
    expect(offenders).toEqual([])
  })

  it('would catch one (the pattern matches the shapes that used to be here)', () => {
    for (const line of [
      "const formA = ctx.state.principal.apiForm === 'A'",
      "if (form === 'B') {",
      "workspace.apiForm === 'A' ? x : y",
      "'A' !== form",
    ]) {
      expect(COMPARISON.test(line), line).toBe(true)
    }
  })
})
