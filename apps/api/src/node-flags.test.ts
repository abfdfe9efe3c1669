// The API's Node flags are declared once (apps/api/package.json `quire.nodeFlags`, read by `npm start`, the
// black-box stack and the bench) and written out in the two container files: they must say the same.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appNodeFlags } from '@quire/testing'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8')
const command = (flags: string[]) => JSON.stringify(['node', ...flags, 'apps/api/dist/main.js']).replaceAll(',', ', ')

describe("the API's Node flags", () => {
  it('are the young generation size, and the Dockerfile and docker-compose.yml start the API with them', () => {
    const flags = appNodeFlags(ROOT, 'api')
    expect(flags).toEqual(['--max-semi-space-size=24'])
    expect(read('Dockerfile')).toContain(`CMD ${command(flags)}`)
    const compose = read('docker-compose.yml')
    const apiService = compose.slice(compose.indexOf('\n  api:\n')).slice(0, 400)
    expect(apiService).toContain(`command: ${command(flags)}`)
  })
})
