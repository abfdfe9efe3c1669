// The machine's own scaling, for the scale scenario: the plain extraction loop (bench/lib/loop-baseline.ts) over
// `BENCH_COUNT` scanned one-page PDFs in this process, no queue, database or HTTP. The scale scenario runs one of these
// and then two side by side: how much two CPU-bound processes get out of this machine's cores is the ceiling for two
// stage workers against one. After its warm-up it prints `ready` and waits for a line on stdin, so processes side by
// side start their timed loops together; then prints {seconds} as JSON.
// Env: BENCH_COUNT.
import { once } from 'node:events'
import { extractionLoop } from '../lib/loop-baseline.ts'
import { scannedPagePdf } from '../lib/documents.ts'

const scanned = await scannedPagePdf()
await extractionLoop([scanned]) // warm-up: OCR language data, JIT
process.stdout.write('ready\n')
await once(process.stdin, 'data')
const { seconds } = await extractionLoop(Array.from({ length: Number(process.env.BENCH_COUNT) }, () => scanned))
process.stdout.write(`${JSON.stringify({ seconds })}\n`)
process.exit(0)
