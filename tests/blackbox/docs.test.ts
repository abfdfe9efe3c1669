// /docs in a real browser (issue 40, item 4): headless Chromium (Debian's `chromium`, driven by playwright-core) opens
// the reference page, which Swagger UI draws from files the API serves itself, for the calling key's form (the
// `X-API-Key` header) and for `?form=` without a key. It finds every jobs operation of that form with its summary,
// and sees no failed or refused load, no request to another origin, no console error and no CSP violation.
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from './browser.ts'
import { call, newWorkspace } from './client.ts'
import { startStack, type Stack } from './stack.ts'

type Operation = { summary?: string }
type OpenApi = { info: { title: string }; paths: Record<string, Record<string, Operation>> }

let stack: Stack
let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
  stack = await startStack()
}, 180_000)
afterAll(async () => {
  await browser?.close()
  await stack?.stop()
})

/** Opens `/docs<query>` (with `headers` on every request) and records everything that went wrong while it loaded. */
async function openDocs(query: string, headers: Record<string, string> = {}) {
  const context = await browser.newContext({ extraHTTPHeaders: headers })
  const page = await context.newPage()
  const problems: string[] = []
  const origins = new Set<string>()
  page.on('request', (r) => origins.add(new URL(r.url()).origin))
  page.on('requestfailed', (r) => problems.push(`load failed: ${r.url()} (${r.failure()?.errorText})`))
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`)
  })
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  // Injected through the DevTools protocol, so the page's CSP does not stop the listener itself.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const w = window as unknown as { cspViolations?: string[] }
      w.cspViolations ??= []
      w.cspViolations.push(`${e.effectiveDirective} ${e.blockedURI}`)
    })
  })
  const res = await page.goto(`${stack.baseUrl}/docs${query}`)
  expect(res?.status()).toBe(200)
  const csp = res?.headers()['content-security-policy'] ?? ''
  expect(csp).toContain("default-src 'none'")
  expect(csp).toContain("script-src 'self'")
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/)
  return { page, context, problems, origins }
}

/** Every operation of the document under a `/v1/jobs` path, as Swagger UI shows it. */
const jobOperations = (doc: OpenApi) =>
  Object.entries(doc.paths)
    .filter(([p]) => p === '/v1/jobs' || p.startsWith('/v1/jobs/'))
    .flatMap(([p, ops]) => Object.entries(ops).map(([method, op]) => ({ path: p, method, summary: op.summary })))

describe('/docs in a browser', () => {
  it.each([
    { form: 'A' as const, by: 'the ?form= query' },
    { form: 'B' as const, by: 'the calling key' },
  ])(
    'shows the Form $form document, chosen by $by, with every jobs operation, from its own assets only',
    async ({ form, by }) => {
      const { key } = await newWorkspace(stack.baseUrl, form)
      const doc = (await call(stack.baseUrl, 'GET', '/v1/openapi.json', { key })).body as OpenApi
      expect(doc.info.title).toContain(`Form ${form}`)
      const opened =
        by === 'the calling key' ? await openDocs('', { 'X-API-Key': key }) : await openDocs(`?form=${form}`)
      const { page, context, problems, origins } = opened
      try {
        await expect
          .poll(() => page.locator('.info .title').textContent(), { timeout: 30_000 })
          .toContain(doc.info.title)
        const operations = jobOperations(doc)
        expect(operations.map((o) => `${o.method} ${o.path}`)).toEqual(
          expect.arrayContaining(['post /v1/jobs', 'get /v1/jobs', 'get /v1/jobs/{job_id}']),
        )
        for (const op of operations) {
          const block = page.locator(`.opblock.opblock-${op.method}`, {
            has: page.locator(`.opblock-summary-path[data-path="${op.path}"]`),
          })
          await expect.poll(() => block.count(), { message: `${op.method} ${op.path}` }).toBe(1)
          if (op.summary) expect(await block.locator('.opblock-summary-description').textContent()).toBe(op.summary)
        }
        // Opening an operation draws its parameters and responses (Swagger UI's own code, under the page's CSP).
        const submit = page.locator('.opblock.opblock-post', {
          has: page.locator('.opblock-summary-path[data-path="/v1/jobs"]'),
        })
        await submit.locator('.opblock-summary').click()
        await submit.locator('.responses-wrapper').waitFor()
        expect(
          await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []),
        ).toEqual([])
        expect(problems).toEqual([])
        expect([...origins]).toEqual([stack.baseUrl])
      } finally {
        await context.close()
      }
    },
  )

  it('serves the page’s assets itself, and 404 for any other name there', async () => {
    for (const [name, type] of [
      ['swagger-ui-bundle.js', /text\/javascript/],
      ['swagger-ui.css', /text\/css/],
      ['docs.js', /text\/javascript/],
      ['docs.css', /text\/css/],
      ['favicon-32x32.png', /image\/png/],
    ] as const) {
      const res = await fetch(`${stack.baseUrl}/docs/assets/${name}`)
      expect(res.status, name).toBe(200)
      expect(res.headers.get('content-type'), name).toMatch(type)
      expect(res.headers.get('x-content-type-options'), name).toBe('nosniff')
      await res.arrayBuffer()
    }
    for (const name of ['index.html', '../package.json', 'swagger-initializer.js']) {
      const res = await fetch(`${stack.baseUrl}/docs/assets/${name}`)
      expect(res.status, name).toBe(404)
      await res.arrayBuffer()
    }
  })
})
