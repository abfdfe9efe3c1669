#!/usr/bin/env node
// @ts-check
// Runs the Prisma CLI offline: points PRISMA_SCHEMA_ENGINE_BINARY at the wasm shim so the CLI
// never tries to download the native schema engine from binaries.prisma.sh.
//   node scripts/prisma/prisma.mjs generate
//   node scripts/prisma/prisma.mjs migrate deploy
import { spawn } from 'node:child_process'
import { chmodSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../../..')
const shim = path.join(here, 'schema-engine-shim.mjs')

// The CLI spawns the shim directly, so it must stay executable (git or a copy may drop the bit).
try {
  if ((statSync(shim).mode & 0o111) !== 0o111) chmodSync(shim, 0o755)
} catch {}

const require = createRequire(path.join(root, 'package.json'))
const cli = path.join(path.dirname(require.resolve('prisma/package.json')), 'build', 'index.js')

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: shim,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
}

const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' })
for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(sig, () => child.kill(sig))
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal)
  else process.exit(code ?? 1)
})
