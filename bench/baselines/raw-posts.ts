// The webhook baseline: `BENCH_COUNT` signed POSTs of one body to the receiver with raw undici, at
// `BENCH_CONCURRENCY` in flight, the least a delivery costs on the wire. Prints {seconds} as JSON.
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
console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000 }))
await agent.close()
