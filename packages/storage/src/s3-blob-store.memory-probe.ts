// Run by s3-blob-store.test.ts in a process of its own (node --expose-gc --single-threaded-gc --import tsx: array
// buffers are then freed by the forced collection itself, not later by a concurrent sweeper), so that only the store's
// side of a transfer is measured (the S3 server stays in the test process). Prints one JSON line:
// {putGrowth, localPathGrowth, readGrowth, heldGrowth} in bytes of live memory (heap + array buffers) above the
// level before each operation, sampled after forced collections; heldGrowth is the control (the file read whole).
import { readFile } from 'node:fs/promises'
import { createS3BlobStore } from './s3-blob-store.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const e = JSON.parse(process.env.PROBE!) as {
  endpoint: string
  region: string
  bucket: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  cacheDir: string
  warmFile: string
  bigFile: string
  bigCopy: string
}
const live = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}
async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  gc!()
  await new Promise((r) => setTimeout(r, 50))
  gc!()
  const base = live()
  let peak = base
  const timer = setInterval(() => {
    gc!()
    peak = Math.max(peak, live())
  }, 20)
  try {
    const kept = await work()
    gc!()
    peak = Math.max(peak, live())
    void kept
  } finally {
    clearInterval(timer)
  }
  return peak - base
}

const store = createS3BlobStore({ ...e, forcePathStyle: true })
// Warm up: load the SDK and open a connection, so the measurement sees only the transfer.
await store.putFile('probe/warm', e.warmFile)
await store.exists('probe/warm')
const putGrowth = await peakGrowth(() => store.putFile('probe/big', e.bigFile))
const localPathGrowth = await peakGrowth(() => store.localPath('probe/big'))
const readGrowth = await peakGrowth(async () => {
  let n = 0
  for await (const c of store.read('probe/big')) n += (c as Buffer).length
  return n
})
const heldGrowth = await peakGrowth(() => readFile(e.bigCopy))
process.stdout.write(`${JSON.stringify({ putGrowth, localPathGrowth, readGrowth, heldGrowth })}\n`)
