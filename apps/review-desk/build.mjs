// @ts-check
// Builds the review desk into dist/ (index.html, assets/desk.js, assets/desk.css): one esbuild bundle, no CDN, no
// inline script or style, so the API can serve it under `Content-Security-Policy: default-src 'self'`. Run by
// `npm run build`, and by `npm start` / `npm test` (scripts/dev/setup.mjs buildReviewDesk) before the API starts.
import { copyFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = path.dirname(fileURLToPath(import.meta.url))
const out = path.join(here, 'dist')
await mkdir(path.join(out, 'assets'), { recursive: true })
await build({
  entryPoints: [path.join(here, 'src/main.tsx')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: path.join(out, 'assets/desk.js'),
  logLevel: 'warning',
  legalComments: 'none',
})
await copyFile(path.join(here, 'src/index.html'), path.join(out, 'index.html'))
await copyFile(path.join(here, 'src/desk.css'), path.join(out, 'assets/desk.css'))
