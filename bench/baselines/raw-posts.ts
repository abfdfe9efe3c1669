// The webhook baseline: `BENCH_COUNT` signed POSTs of one body to the receiver with raw undici, at
// `BENCH_CONCURRENCY` in flight, the least a delivery costs on the wire. Prints {seconds, cpuMs} as JSON (cpuMs: the
// process's user + system CPU during the POSTs).
// Env: BENCH_URL, BENCH_CA_FILE, BENCH_BODY_FILE, BENCH_COUNT, BENCH_CONCURRENCY.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'

const body = readFileSync(process.env.BENCH_BODY_FILE!)
const count = Number(process.env.BENCH_COUNT)
const concurrency = Number(process.env.BENCH_CONCURRENCY)
const agent = new Agent({ connect: { ca: readFileSync(process.env.BENCH_CA_FILE!, 'utf8') } })
const signature = createHmac('sha256', 'bench-secret').update(body).digest('hex')
let next = 0
const t0 = performance.now()
const cpu0 = process.cpuUsage()
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      next++
      const res = await request(process.env.BENCH_URL!, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'x-signature': signature },
        body,
      })
      await res.body.dump()
      if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`)
    }
  }),
)
const cpu = process.cpuUsage(cpu0)
console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000, cpuMs: (cpu.user + cpu.system) / 1000 }))
await agent.close()
