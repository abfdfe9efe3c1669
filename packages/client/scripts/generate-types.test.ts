import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { FORMS, renderTypes, typesPath } from './generate-types.ts'

// A route added or changed without `npm run generate -w @quire/client` fails CI here.
describe('@quire/client generated types', () => {
  for (const form of FORMS) {
    it(`match the served Form ${form} OpenAPI document`, async () => {
      const checkedIn = await readFile(typesPath(form), 'utf8')
      expect(checkedIn === (await renderTypes(form)), 'run `npm run generate -w @quire/client`').toBe(true)
    })
  }
})
