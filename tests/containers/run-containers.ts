// `npm run test:containers`: Quire as containers, for real. Builds the image (compiled JavaScript, production
// dependencies, Node 22, non-root) with podman, brings docker-compose.yml up with podman-compose (PostgreSQL, Redis,
// the one-shot migrate, api, both stage-worker groups with the parse group scaled to 2, the dispatcher), takes one
// job of each form to a signed webhook at an HTTPS receiver on this machine, and tears everything down. Prints timings.
// Without a reachable registry, base images are built from Debian packages (scripts/dev/containers/base-images.sh).
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { verifyFormA, verifyFormB } from '@quire/signing'
import selfsigned from 'selfsigned'
import { invoicePdf } from '../fixtures/make-fixtures.ts'

// QUIRE_CONTAINERS_CONTEXT: build and compose from another checkout (e.g. `git archive HEAD`) instead of this one.
const ROOT = path.resolve(
  process.env.QUIRE_CONTAINERS_CONTEXT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
)
const CONTAINERS = path.join(ROOT, 'scripts', 'dev', 'containers')
const PROJECT = `quirect${process.pid}`
const ADMIN_TOKEN = randomBytes(24).toString('hex')
const APP_IMAGE = 'localhost/quire-app:test'
const env: NodeJS.ProcessEnv = { ...process.env, CONTAINERS_CONF: path.join(CONTAINERS, 'containers.conf') }
const t0 = Date.now()
const timings: [string, number][] = []

async function step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  const s = Date.now()
  console.log(`[containers] ${name} ...`)
  const r = await fn()
  timings.push([name, (Date.now() - s) / 1000])
  console.log(`[containers] ${name} (${((Date.now() - s) / 1000).toFixed(1)} s)`)
  return r
}

function run(cmd: string, args: string[], opts: { quiet?: boolean; extraEnv?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    env: { ...env, ...opts.extraEnv },
    encoding: 'utf8',
    stdio: opts.quiet ? 'pipe' : ['ignore', 'inherit', 'inherit'],
    maxBuffer: 64 << 20,
  })
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stderr ?? ''}`.slice(0, 4000))
  return r.stdout ?? ''
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const which = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined)
    if (v !== undefined && v !== false) return v as T
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(1000)
  }
}

/** The CNI plugin that lets compose services find each other by name (podman 4.3 with CNI networking). */
const DNSNAME_PLUGIN = '/usr/lib/cni/dnsname'
const PACKAGES = ['podman', 'podman-compose', 'runc', 'debootstrap', 'golang-github-containernetworking-plugin-dnsname']

function ensureTools() {
  const missing = ['podman', 'podman-compose', 'runc', 'debootstrap'].filter((b) => !which(b))
  if (!existsSync(DNSNAME_PLUGIN)) missing.push('the CNI dnsname plugin')
  if (!missing.length) return
  const root = process.getuid?.() === 0
  if (!root || process.env.QUIRE_ALLOW_INSTALL === '0')
    throw new Error(`missing: ${missing.join(', ')}. Install: apt-get install ${PACKAGES.join(' ')}`)
  run('apt-get', ['install', '-y', '--no-install-recommends', ...PACKAGES], {
    extraEnv: { DEBIAN_FRONTEND: 'noninteractive' },
  })
}

/** Public images when a registry answers (or QUIRE_*_IMAGE name them); else local ones made from Debian packages. */
function baseImages(): { node: string; postgres: string; redis: string } {
  const wanted = {
    node: process.env.QUIRE_NODE_IMAGE ?? 'docker.io/library/node:22-bookworm-slim',
    postgres: process.env.QUIRE_POSTGRES_IMAGE ?? 'docker.io/library/postgres:15',
    redis: process.env.QUIRE_REDIS_IMAGE ?? 'docker.io/library/redis:7',
  }
  const present = (img: string) =>
    spawnSync('podman', ['image', 'exists', img], { env }).status === 0 ||
    spawnSync('timeout', ['60', 'podman', 'pull', '-q', img], { env, stdio: 'ignore' }).status === 0
  if (Object.values(wanted).every(present)) return wanted
  console.log('[containers] no registry image available: using base images built from Debian packages')
  run('bash', [path.join(CONTAINERS, 'base-images.sh')])
  return { node: 'localhost/quire-node:22', postgres: 'localhost/quire-postgres:15', redis: 'localhost/quire-redis:7' }
}

/** An HTTPS receiver on every interface with a certificate for the name containers use for this machine. */
async function startReceiver() {
  const host = 'host.containers.internal'
  const pems = selfsigned.generate([{ name: 'commonName', value: host }], {
    days: 1,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: host }] },
    ],
  })
  const received: { headers: Record<string, string>; body: Buffer }[] = []
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) })
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', r))
  const port = (server.address() as AddressInfo).port
  return { url: `https://${host}:${port}/hook`, ca: pems.cert, received, close: () => server.close() }
}

type Res = { status: number; body: any }
async function call(base: string, method: string, p: string, opts: { key?: string; json?: unknown; form?: FormData }) {
  const headers: Record<string, string> = opts.key
    ? { 'X-API-Key': opts.key }
    : { Authorization: `Bearer ${ADMIN_TOKEN}` }
  if (opts.json !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(base + p, {
    method,
    headers,
    signal: AbortSignal.timeout(30_000),
    body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.form,
  })
  const text = await res.text()
  const out: Res = { status: res.status, body: text ? JSON.parse(text) : null }
  return out
}
function expectStatus(r: Res, status: number, what: string) {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}
function pdfForm(field: string, pdf: Uint8Array, fields: Record<string, string>) {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append(field, new Blob([pdf as Uint8Array<ArrayBuffer>], { type: 'application/pdf' }), 'invoice.pdf')
  return form
}
const SCOPES = ['jobs:write', 'jobs:read', 'webhook:write', 'webhooks:write', 'webhooks:read', 'pipelines:write']

async function workspace(base: string, form: 'A' | 'B') {
  const ws = expectStatus(
    await call(base, 'POST', '/admin/v1/workspaces', { json: { name: `ct-${form}`, api_form: form, credits: 10 } }),
    201,
    'create workspace',
  )
  const key = expectStatus(
    await call(base, 'POST', `/admin/v1/workspaces/${ws.id}/api-keys`, { json: { scopes: SCOPES } }),
    201,
    'create key',
  )
  return key.key as string
}

async function main() {
  ensureTools()
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'quire-containers-'))
  const receiver = await startReceiver()
  const compose = (args: string[], opts: { quiet?: boolean } = {}) =>
    run('podman-compose', ['-p', PROJECT, '-f', 'docker-compose.yml', '-f', path.join(tmp, 'override.yml'), ...args], {
      ...opts,
      extraEnv: composeEnv,
    })
  let composeEnv: NodeJS.ProcessEnv = {}
  let up = false
  // Ctrl-C / SIGTERM still tears the project down.
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      console.error(`[containers] ${sig}: tearing down`)
      if (up)
        spawnSync('podman-compose', ['-p', PROJECT, 'down', '-v', '-t', '2'], { cwd: ROOT, env, stdio: 'inherit' })
      process.exit(130)
    })
  try {
    const images = await step('base images', baseImages)
    // The machine's CA bundle reaches the build only as a read-only mount (outbound TLS may go through it).
    const ca = process.env.NODE_EXTRA_CA_CERTS
    const caArgs = ca ? ['-v', `${ca}:/run/host-ca.pem:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/run/host-ca.pem'] : []
    // npm's cache for the image's installs: a directory of this test's own (kept between runs), not the user's ~/.npm.
    const npmCache = path.join(os.homedir(), '.cache', 'quire-containers', 'npm')
    mkdirSync(npmCache, { recursive: true })
    await step('image build', () =>
      run('podman', [
        'build',
        '-t',
        APP_IMAGE,
        '--build-arg',
        `BASE=${images.node}`,
        ...caArgs,
        '-v',
        `${npmCache}:/root/.npm`,
        '-f',
        'Dockerfile',
        '.',
      ]),
    )
    await step('image checks: non-root, Node 22, no dev dependencies', () => {
      const out = run(
        'podman',
        [
          'run',
          '--rm',
          APP_IMAGE,
          'sh',
          '-c',
          'id -u; node -v; ls node_modules/tsx node_modules/typescript 2>&1 | wc -l; ls packages/db',
        ],
        { quiet: true },
      ).split('\n')
      if (out[0] === '0') throw new Error('the image runs as root')
      if (!out[1]?.startsWith('v22.')) throw new Error(`expected Node 22, got ${out[1]}`)
      if (
        run(
          'podman',
          [
            'run',
            '--rm',
            APP_IMAGE,
            'sh',
            '-c',
            'test -e node_modules/tsx || test -e node_modules/vitest && echo dev || true',
          ],
          { quiet: true },
        ).includes('dev')
      )
        throw new Error('dev dependencies in the image')
      console.log(`[containers] uid ${out[0]}, node ${out[1]}, packages/db: ${out.slice(3).join(' ')}`)
    })

    writeFileSync(path.join(tmp, 'receiver-ca.pem'), receiver.ca)
    writeFileSync(
      path.join(tmp, 'override.yml'),
      `services:\n  webhook-dispatcher:\n    volumes:\n      - ${path.join(tmp, 'receiver-ca.pem')}:/run/quire/receiver-ca.pem:ro\n` +
        '    environment:\n      QUIRE_WEBHOOK_EXTRA_CA_FILE: /run/quire/receiver-ca.pem\n',
    )
    const apiPort = 20000 + (process.pid % 20000)
    const base = `http://127.0.0.1:${apiPort}`
    composeEnv = {
      QUIRE_IMAGE: APP_IMAGE,
      QUIRE_POSTGRES_IMAGE: images.postgres,
      QUIRE_REDIS_IMAGE: images.redis,
      QUIRE_ADMIN_TOKEN: ADMIN_TOKEN,
      QUIRE_SECRETS_KEY: randomBytes(32).toString('base64'),
      QUIRE_API_PORT: String(apiPort),
      QUIRE_PUBLIC_URL: base,
      // The receiver is this machine, a private address: allowed outside NODE_ENV=production only.
      NODE_ENV: 'staging',
      QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      POSTGRES_PASSWORD: randomBytes(8).toString('hex'),
      // podman-compose 1.0 parses --scale but ignores it; it honours deploy.replicas (docker compose honours both).
      QUIRE_PARSE_REPLICAS: '2',
    }
    up = true
    // podman-compose does not wait on depends_on conditions: bring the stack up in the order they describe.
    await step('postgres + redis healthy', async () => {
      compose(['up', '-d', 'postgres', 'redis'], { quiet: true })
      await until(
        'postgres',
        () => spawnSync('podman', ['healthcheck', 'run', `${PROJECT}_postgres_1`], { env }).status === 0 || undefined,
      )
      await until(
        'redis',
        () => spawnSync('podman', ['healthcheck', 'run', `${PROJECT}_redis_1`], { env }).status === 0 || undefined,
      )
    })
    await step('migrate (one-shot)', () => {
      compose(['up', '-d', 'migrate'], { quiet: true })
      const code = run('podman', ['wait', `${PROJECT}_migrate_1`], { quiet: true }).trim()
      console.log(run('podman', ['logs', `${PROJECT}_migrate_1`], { quiet: true }).trim())
      if (code !== '0') throw new Error(`migrate exited ${code}`)
    })
    await step('apps up (stage-worker-parse scaled to 2)', async () => {
      compose(
        [
          'up',
          '-d',
          '--scale',
          'stage-worker-parse=2',
          'api',
          'stage-worker',
          'stage-worker-parse',
          'webhook-dispatcher',
        ],
        {
          quiet: true,
        },
      )
      await until('api /healthz', async () =>
        (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(3000) })).ok ? true : undefined,
      )
      const names = run('podman', ['ps', '--filter', `name=${PROJECT}_`, '--format', '{{.Names}}'], { quiet: true })
      const parse = names.split('\n').filter((n) => n.includes('stage-worker-parse')).length
      console.log(`[containers] running: ${names.trim().split('\n').join(', ')}`)
      if (parse !== 2) throw new Error(`expected 2 stage-worker-parse containers, found ${parse}`)
    })

    await step('review desk served from the image (built by npm run build)', async () => {
      for (const p of ['/review', '/review/assets/desk.js', '/review/assets/desk.css']) {
        const res = await fetch(base + p, { signal: AbortSignal.timeout(10_000) })
        if (res.status !== 200) throw new Error(`${p}: expected 200, got ${res.status} ${await res.text()}`)
        if (res.headers.get('content-security-policy') !== "default-src 'self'") throw new Error(`${p}: no CSP`)
        await res.arrayBuffer()
      }
    })

    await step('/docs and its assets served from the image (Swagger UI and our own init script)', async () => {
      for (const p of [
        '/docs?form=B',
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/swagger-ui.css',
        '/docs/assets/docs.js',
        '/docs/assets/docs.css',
      ]) {
        const res = await fetch(base + p, { signal: AbortSignal.timeout(10_000) })
        if (res.status !== 200) throw new Error(`${p}: expected 200, got ${res.status} ${await res.text()}`)
        await res.arrayBuffer()
      }
    })

    const pdf = await invoicePdf()
    await step('Form A job -> signed destination.exited', async () => {
      const key = await workspace(base, 'A')
      const hook = expectStatus(
        await call(base, 'POST', '/v1/webhooks', {
          key,
          json: { name: 'r', url: receiver.url, auth_type: 'NONE', events: ['job.failed'] },
        }),
        201,
        'webhook A',
      )
      const pipeline = expectStatus(
        await call(base, 'POST', '/v1/pipelines', {
          key,
          json: { name: 'p', definition: { bindings: { destination: { exit_webhook_id: hook.id } } } },
        }),
        201,
        'pipeline',
      )
      expectStatus(await call(base, 'POST', `/v1/pipelines/${pipeline.id}/versions/1/publish`, { key }), 200, 'publish')
      const job = expectStatus(
        await call(base, 'POST', '/v1/jobs', { key, form: pdfForm('file', pdf, { pipeline_id: pipeline.id }) }),
        202,
        'submit A',
      )
      const got = await until(
        'Form A webhook',
        () => receiver.received.find((r) => r.body.includes(job.id) && r.body.includes('destination.exited')),
        180_000,
      )
      if (!verifyFormA({ secret: hook.hmac_secret, rawBody: got.body, signature: got.headers['x-service-signature'] }))
        throw new Error('Form A signature does not verify')
      const final = await call(base, 'GET', `/v1/jobs/${job.id}`, { key })
      if (final.body.status !== 'completed') throw new Error(`Form A job: ${JSON.stringify(final.body)}`)
    })
    await step('Form B job -> signed job.completed', async () => {
      const key = await workspace(base, 'B')
      const hook = expectStatus(
        await call(base, 'POST', '/v1/webhooks', {
          key,
          json: { name: 'r', url: receiver.url, events: ['job.completed'] },
        }),
        201,
        'webhook B',
      )
      const jobs = expectStatus(
        await call(base, 'POST', '/v1/jobs', { key, form: pdfForm('files', pdf, {}) }),
        202,
        'submit B',
      )
      // Form B answers one submit-response object per file.
      const jobId = jobs[0].job_id as string
      const got = await until(
        'Form B webhook',
        () => receiver.received.find((r) => r.body.includes(jobId) && r.body.includes('job.completed')),
        180_000,
      )
      const v = verifyFormB({
        secret: hook.secret,
        rawBody: got.body,
        signature: got.headers['x-service-signature'],
        timestamp: got.headers['x-service-timestamp'],
      })
      if (!v.ok) throw new Error(`Form B signature: ${v.reason}`)
      const final = await call(base, 'GET', `/v1/jobs/${jobId}`, { key })
      if (final.body.status !== 'completed') throw new Error(`Form B job: ${JSON.stringify(final.body)}`)
    })
    console.log('[containers] PASS')
  } catch (err) {
    if (up) {
      for (const s of ['api', 'stage-worker', 'stage-worker-parse', 'webhook-dispatcher', 'migrate'])
        spawnSync('sh', ['-c', `podman logs --tail 30 ${PROJECT}_${s}_1 2>&1 | sed 's/^/  ${s} | /'`], {
          env,
          stdio: 'inherit',
        })
    }
    throw err
  } finally {
    if (up)
      await step('tear down', () => compose(['down', '-v'], { quiet: true })).catch((e) => console.error(e.message))
    receiver.close()
    rmSync(tmp, { recursive: true, force: true })
    for (const [name, s] of timings) console.log(`[containers] ${name.padEnd(52)} ${s.toFixed(1).padStart(7)} s`)
    console.log(`[containers] total ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[containers] FAIL: ${err.stack ?? err}`)
    process.exit(1)
  },
)
