// webhooks: deliveries per second from the dispatcher to a local HTTPS receiver, against raw undici POSTs of the
// same body to the same receiver at the dispatcher's concurrency (bench/baselines/raw-posts.ts, its own process).
// Events are written the way the core writes them (recordEvents: event row + outbox fan-out in one transaction) to a
// Form B workspace with one webhook; the clock runs from the commit to the last delivery recorded as succeeded.
// Only the API (for set-up) and the dispatcher run. Target: ≥ 0.7× the raw POSTs.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { recordEvents } from '@quire/core'
import { createPrisma } from '@quire/db'
import { startHttpsReceiver } from '@quire/testing'
import {
  benchWorkspace,
  cpuMs,
  median,
  postgresCpu,
  postgresCpuSince,
  QUICK,
  record,
  ROOT,
  startApps,
  waitForCount,
} from './lib/kit.ts'

// BENCH_WEBHOOKS_COUNT: deliveries per round instead (longer rounds for steadier CPU figures).
const COUNT = Number(process.env.BENCH_WEBHOOKS_COUNT) || (QUICK ? 300 : 2000)
const ROUNDS = QUICK ? 1 : 3
const CONCURRENCY = 20 // QUIRE_DELIVERY_CONCURRENCY's default

const receiver = await startHttpsReceiver()
const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-webhooks-'))
const caFile = path.join(dir, 'ca.pem')
writeFileSync(caFile, receiver.ca)
const apps = await startApps('webhooks', {
  apps: ['api', 'webhook-dispatcher'],
  env: { QUIRE_WEBHOOK_EXTRA_CA_FILE: caFile, QUIRE_DELIVERY_CONCURRENCY: String(CONCURRENCY) },
})
const db = createPrisma(apps.databaseUrl)
try {
  const { key, workspaceId } = await benchWorkspace(apps.baseUrl, 'B')
  const hook = await fetch(`${apps.baseUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench', url: `${receiver.url}/quire`, events: ['pipeline.deployed'] }),
  })
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`)

  const succeeded = async () => db.webhookDelivery.count({ where: { status: 'succeeded', webhook: { workspaceId } } })
  let delivered = 0
  const database = new URL(apps.databaseUrl).pathname.slice(1)
  // CPU per delivery (ms) of the dispatcher and of PostgreSQL (all backends of the scenario's database), per round.
  const cpu: { dispatcher: number; pg: number }[] = []
  const quireRound = async (n: number) => {
    const dispatcher0 = cpuMs(apps.pid('webhook-dispatcher'))
    const pg0 = postgresCpu(database)
    const posted0 = receiver.received.length
    const t0 = performance.now()
    for (let i = 0; i < n; i += 100) {
      const batch = Math.min(100, n - i)
      await db.$transaction((tx) =>
        recordEvents(
          tx,
          Array.from({ length: batch }, (_, j) => ({
            workspaceId,
            type: 'pipeline.deployed' as const,
            data: { pipeline_id: 'ppl_bench', version: i + j + 1 },
          })),
        ),
      )
    }
    // The clock stops when PostgreSQL counts them all succeeded. The count reads every delivery of the workspace (no
    // index on status), several ms of PostgreSQL CPU each time by the last round, so it is polled only once the
    // receiver has had a POST for each: 50 ms polls during the whole round would put that load on the Quire side alone.
    let posted = 0
    for (let next = posted0; posted < n && performance.now() - t0 < 300_000; ) {
      for (; next < receiver.received.length; next++) if (receiver.received[next]!.path.endsWith('/quire')) posted++
      await new Promise((r) => setTimeout(r, 5))
    }
    const seconds = await waitForCount(succeeded, delivered + n, t0, 300_000)
    delivered += n
    cpu.push({
      dispatcher: (cpuMs(apps.pid('webhook-dispatcher')) - dispatcher0) / n,
      pg: postgresCpuSince(database, pg0) / n,
    })
    return n / seconds
  }
  const rawRound = async (n: number, sample: Buffer) => {
    const bodyFile = path.join(dir, 'body.json')
    writeFileSync(bodyFile, sample)
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'bench', 'baselines', 'raw-posts.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          BENCH_URL: `${receiver.url}/raw`,
          BENCH_CA_FILE: caFile,
          BENCH_BODY_FILE: bodyFile,
          BENCH_COUNT: String(n),
          BENCH_CONCURRENCY: String(CONCURRENCY),
        },
      },
    )
    const out = JSON.parse(stdout) as { seconds: number; cpuMs: number }
    rawCpu.push(out.cpuMs / n)
    return n / out.seconds
  }
  const rawCpu: number[] = []

  // Warm-up, and a real delivery body for the baseline to send. A full round: after 200 deliveries the dispatcher's
  // JIT and connection pools were still cold, and the first measured round ran at about half the speed of the next.
  await quireRound(COUNT)
  const sample = receiver.received.filter((r) => r.path.endsWith('/quire')).at(-1)?.rawBody
  if (!sample) throw new Error('no delivery arrived during the warm-up')
  await rawRound(QUICK ? 50 : 200, sample)
  const quire: number[] = []
  const raw: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2) {
      raw.push(await rawRound(COUNT, sample))
      quire.push(await quireRound(COUNT))
    } else {
      quire.push(await quireRound(COUNT))
      raw.push(await rawRound(COUNT, sample))
    }
    receiver.received.length = 0
  }
  // The warm-up rounds are left out.
  const measured = cpu.slice(1)
  const ms = (xs: number[]) => `${median(xs).toFixed(3)} ms`
  console.log(
    `  webhooks · CPU per delivery: dispatcher ${ms(measured.map((c) => c.dispatcher))}, ` +
      `PostgreSQL ${ms(measured.map((c) => c.pg))}; raw client ${ms(rawCpu.slice(1))} per POST ` +
      `(rounds: ${quire.map((q, i) => `${Math.round(q)}/${Math.round(raw[i]!)}`).join(', ')})`,
  )
  const value = median(quire)
  const baseline = median(raw)
  record({
    scenario: 'webhooks',
    metric: `deliveries/s, ${CONCURRENCY} in flight`,
    value,
    baseline,
    ratio: value / baseline,
    unit: 'deliveries/s',
    target: '≥ 0.7×',
  })
} finally {
  await db.$disconnect()
  await apps.stop()
  await receiver.close()
  rmSync(dir, { recursive: true, force: true })
}
