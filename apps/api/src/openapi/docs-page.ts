import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Middleware } from 'koa'

/**
 * `/docs` is Swagger UI (swagger-ui-dist, pinned in package.json) drawing the OpenAPI document of the caller's form.
 * Every file comes from this API (DOCS_ASSETS), none from a CDN, so the page works offline. The document travels in
 * the page as a JSON data block, which browsers never run, and Swagger UI is started by a file of ours
 * (apps/api/assets/docs.js): the page has no inline script or style.
 */
export const DOCS_ASSETS = '/docs/assets'

/**
 * Only this origin's scripts, styles and fonts; `data:` images (Swagger UI's stylesheet draws its icons so);
 * `connect-src 'self'` for "Try it out" against this API. No frames, no plugins, no other origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Headers of the /docs page itself. */
export const DOCS_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DOCS_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
}

const swaggerUiDir = () => path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
// apps/api/assets, from src/openapi (sources) and dist/openapi (build) alike.
const ownAssetsDir = () => fileURLToPath(new URL('../../assets/', import.meta.url))

/** The files /docs loads, by the name it loads them under. */
const ASSETS: Record<string, { dir: () => string; file: string; type: string }> = {
  'swagger-ui.css': { dir: swaggerUiDir, file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { dir: swaggerUiDir, file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { dir: swaggerUiDir, file: 'favicon-32x32.png', type: 'image/png' },
  'docs.css': { dir: ownAssetsDir, file: 'docs.css', type: 'text/css; charset=utf-8' },
  'docs.js': { dir: ownAssetsDir, file: 'docs.js', type: 'text/javascript; charset=utf-8' },
}

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const page = (title: string, nav: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><link rel="icon" type="image/png" href="${DOCS_ASSETS}/favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_ASSETS}/swagger-ui.css"><link rel="stylesheet" href="${DOCS_ASSETS}/docs.css">
</head><body><nav class="quire-docs-nav">${nav}</nav>${body}</body></html>
`

const formLinks = (form?: 'A' | 'B') =>
  (['A', 'B'] as const)
    .map((f) => (f === form ? `<b>Form ${f}</b>` : `<a href="?form=${f}">Form ${f}</a>`))
    .concat(form ? [`<a href="/v1/openapi.json?form=${form}">openapi.json</a>`] : [])
    .join(' ')

/** The reference page of one form's document. */
export function renderDocsPage(doc: Record<string, unknown>, form: 'A' | 'B'): string {
  const title = String((doc.info as { title?: unknown } | undefined)?.title ?? 'Quire API')
  // `<` escaped, so no `</script>` or `<!--` inside the document can end the data block.
  const json = JSON.stringify(doc).replace(/</g, '\\u003c')
  return page(
    title,
    `<b>${esc(title)}</b> ${formLinks(form)}`,
    `<main id="reference"></main>
<script type="application/json" id="openapi-document">${json}</script>
<script src="${DOCS_ASSETS}/swagger-ui-bundle.js"></script><script src="${DOCS_ASSETS}/docs.js"></script>`,
  )
}

/** `/docs` with neither a form nor a key: one link per form. */
export function renderDocsIndex(): string {
  return page(
    'Quire API reference',
    `<b>Quire API</b> ${formLinks()}`,
    `<main class="quire-docs-index"><h1>Quire API reference</h1>
<p>Quire serves two API forms; a workspace uses one, fixed at creation, and every <code>/v1</code> request is answered in
the form of its API key. Pick yours:</p>
<ul><li><a href="?form=A">Form A</a> (<a href="/v1/openapi.json?form=A">openapi.json</a>)</li>
<li><a href="?form=B">Form B</a> (<a href="/v1/openapi.json?form=B">openapi.json</a>)</li></ul>
<p>With an <code>X-API-Key</code> header, <code>/docs</code> and <code>/v1/openapi.json</code> answer in the key’s form.</p>
</main>`,
  )
}

/**
 * Serves the files /docs loads at DOCS_ASSETS/<name>, read once and kept in memory; any other name there is 404.
 */
export function docsAssets(): Middleware {
  const files = new Map<string, Promise<Buffer>>()
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${DOCS_ASSETS}/`) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next()
    const name = ctx.path.slice(DOCS_ASSETS.length + 1)
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!asset) return next()
    let bytes = files.get(name)
    if (!bytes) {
      bytes = readFile(path.join(asset.dir(), asset.file))
      files.set(name, bytes)
      bytes.catch(() => files.delete(name))
    }
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.set('Cache-Control', 'no-cache')
    ctx.type = asset.type
    ctx.body = await bytes
  }
}
