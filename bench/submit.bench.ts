// submit: POST /v1/jobs (Form B, async) against a bare Koa app doing the least a submission must do (multipart to a
// temporary file, sniff, page count, one INSERT, one conditional balance UPDATE, one queue.add; see
// bench/baselines/bare-submit.ts). Only the API runs, so nothing competes for the machine. Both sides get the same
// one-page PDF and the same closed-loop load (autocannon) at 1 and 8 connections, in interleaved rounds; medians.
// Target: ≥ 0.8× the bare app's throughput, and its p99 within 1/0.8 of the bare app's.
// A third side, measured in the same rounds and printed as a reference line (not a row): the bare app with Quire's
// domain calls in place of its INSERT and UPDATE, the API key kept as the API keeps it (domain-submit.ts). It
// splits the distance into what a submission's guarantees cost (the key, the job's rows and files) and what the API
// around them costs.
// A fifth side, the floor (floor-submit.ts): what the spec requires of a submission the cheapest correct way (the type
// from the upload's first bytes, the pages from the file's structure, the key check, the reservation and the job row
// in one statement, the answer, then one queue.add). Quire's rows are recorded against it too, with the same target.
import { randomBytes } from 'node:crypto'
import { invoicePdf } from '../tests/fixtures/make-fixtures.ts'
import { startApiWithBaselines } from './lib/bare-app.ts'
import {
  benchWorkspace,
  cpuMs,
  load,
  mainThreadCpuMs,
  median,
  multipartBody,
  postgresCpu,
  postgresCpuSince,
  QUICK,
  record,
  settleDatabase,
} from './lib/kit.ts'

const ROUNDS = QUICK ? 1 : 4
const SECONDS = QUICK ? 1 : 8
const CONNECTIONS = [1, 8]

// The key the floor accepts (it keeps its own key table); the baselines' processes inherit this environment.
process.env.BENCH_FLOOR_KEY = `qk_floor_${randomBytes(16).toString('hex')}`
const {
  apps,
  baselines: [bare, domain, rows, floor],
} = await startApiWithBaselines('submit', ['bare-submit.ts', 'domain-submit.ts', 'rows-submit.ts', 'floor-submit.ts'])
try {
  // A workspace per side, as each checks a key of its own: neither waits on the other's balance row.
  const { key } = await benchWorkspace(apps.baseUrl, 'B')
  const domainKey = (await benchWorkspace(apps.baseUrl, 'B')).key
  const pdf = await invoicePdf()
  const { body, contentType } = multipartBody('files', 'invoice.pdf', pdf)
  const sides = {
    quire: { url: `${apps.baseUrl}/v1/jobs`, headers: { 'Content-Type': contentType, 'X-API-Key': key } },
    bare: { url: `${bare.url}/v1/jobs`, headers: { 'Content-Type': contentType } },
    domain: { url: `${domain.url}/v1/jobs`, headers: { 'Content-Type': contentType, 'X-API-Key': domainKey } },
    rows: { url: `${rows.url}/v1/jobs`, headers: { 'Content-Type': contentType } },
    floor: {
      url: `${floor.url}/v1/jobs`,
      headers: { 'Content-Type': contentType, 'X-API-Key': process.env.BENCH_FLOOR_KEY },
    },
  }
  // Warm-up: JIT, connection pools, first-use caches. In the full run long enough for the JIT to settle: with 3 s,
  // every side still gained 20-40% over the next 10 s of load (most of all the API, the most code to optimise), and
  // the rounds measured the compiler's background threads.
  for (const side of Object.values(sides)) await load({ ...side, body, connections: 8, seconds: QUICK ? 1 : 12 })
  await settleDatabase(apps.databaseUrl)

  const results: Record<string, { rps: number[]; p99: number[] }> = {}
  // Where the time goes: CPU per request of each side's app process (its event loop and its other threads apart) and
  // of the PostgreSQL backends of the database (both sides use the same one; their backends are told apart by the
  // measuring window).
  const database = new URL(apps.databaseUrl).pathname.slice(1)
  const pids = { quire: apps.pid('api'), bare: bare.pid, domain: domain.pid, rows: rows.pid, floor: floor.pid }
  const cpu: Record<string, { app: number; loop: number; pg: number; requests: number }> = {}
  for (let round = 0; round < ROUNDS; round++) {
    for (const connections of CONNECTIONS) {
      const sideNames = ['quire', 'bare', 'domain', 'rows', 'floor'] as const
      // Each side leads in turn, so none always runs right after another's load.
      const order = sideNames.map((_, i) => sideNames[(i + round) % sideNames.length]!)
      for (const name of order) {
        const app0 = cpuMs(pids[name])
        const loop0 = mainThreadCpuMs(pids[name])
        const pg0 = postgresCpu(database)
        const r = await load({ ...sides[name], body, connections, seconds: SECONDS })
        const used = (cpu[`${name}@${connections}`] ??= { app: 0, loop: 0, pg: 0, requests: 0 })
        used.app += cpuMs(pids[name]) - app0
        used.loop += mainThreadCpuMs(pids[name]) - loop0
        used.pg += postgresCpuSince(database, pg0)
        used.requests += r.rps * SECONDS
        if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`)
        const k = `${name}@${connections}`
        results[k] ??= { rps: [], p99: [] }
        results[k].rps.push(r.rps)
        results[k].p99.push(r.p99)
      }
    }
  }
  for (const [k, c] of Object.entries(cpu)) {
    const per = (ms: number) => (ms / c.requests).toFixed(2)
    console.log(
      `  submit · CPU per request, ${k}: app ${per(c.app)} ms (event loop ${per(c.loop)}, other threads ` +
        `${per(c.app - c.loop)}), PostgreSQL ${per(c.pg)} ms`,
    )
  }
  for (const connections of CONNECTIONS) {
    const q = results[`quire@${connections}`]!
    const b = results[`bare@${connections}`]!
    const d = results[`domain@${connections}`]!
    const w = results[`rows@${connections}`]!
    const [rq, rb, rd, rw] = [median(q.rps), median(b.rps), median(d.rps), median(w.rps)]
    const [pq, pb, pd, pw] = [median(q.p99), median(b.p99), median(d.p99), median(w.p99)]
    console.log(
      `  submit · reference at ${connections}: the submission's rows as one plain statement in the bare app ` +
        `${rw.toFixed(1)} req/s, p99 ${pw} ms: ${(rw / rb).toFixed(2)}× the bare app's throughput, p99 ` +
        `${(pb / pw).toFixed(2)}× (what the rows themselves cost); Quire's domain calls ${(rd / rw).toFixed(2)}× of it ` +
        `(the key's confirmation and how submit_jobs writes them)`,
    )
    console.log(
      `  submit · reference at ${connections}: Quire's domain calls in the bare app ${rd.toFixed(1)} req/s, p99 ` +
        `${pd} ms: ${(rd / rb).toFixed(2)}× the bare app's throughput, p99 ${(pb / pd).toFixed(2)}× (the key, rows ` +
        `and files a submission needs); the API ${(rq / rd).toFixed(2)}× of it, p99 ${(pd / pq).toFixed(2)}× (the HTTP ` +
        `framework around them)`,
    )
  }
  const against = { 'the bare app': 'bare', 'the floor': 'floor' } as const
  for (const [label, side] of Object.entries(against)) {
    for (const connections of CONNECTIONS) {
      const q = results[`quire@${connections}`]!
      const b = results[`${side}@${connections}`]!
      const plural = connections > 1 ? 's' : ''
      const rps = median(q.rps)
      const baseRps = median(b.rps)
      record({
        scenario: 'submit',
        metric: `throughput, ${connections} connection${plural}, vs ${label}`,
        value: rps,
        baseline: baseRps,
        ratio: rps / baseRps,
        unit: 'req/s',
        target: '≥ 0.8×',
      })
      const p99 = median(q.p99)
      const baseP99 = median(b.p99)
      record({
        scenario: 'submit',
        metric: `p99 latency, ${connections} connection${plural}, vs ${label}`,
        value: p99,
        baseline: baseP99,
        ratio: baseP99 / Math.max(p99, 0.001),
        unit: 'ms',
        target: '≥ 0.8×',
      })
    }
  }
} finally {
  await Promise.all([floor.stop(), rows.stop(), domain.stop(), bare.stop()])
  await apps.stop()
}
