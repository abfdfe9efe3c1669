import { readFileSync } from 'node:fs'
import path from 'node:path'

/**
 * The Node flags an app runs with: `quire.nodeFlags` in apps/<app>/package.json, which `npm start`, the Dockerfile
 * and docker-compose.yml also follow. Harnesses that start the apps as processes (the black-box stack, the bench)
 * take them from here, so they run what production runs.
 */
export function appNodeFlags(root: string, app: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'apps', app, 'package.json'), 'utf8')) as {
    quire?: { nodeFlags?: string[] }
  }
  return pkg.quire?.nodeFlags ?? []
}
