// upload: how much the API's resident memory grows while one ~100 MB PDF (the largest file a submission may carry)
// arrives and is accepted, sampled from /proc every 25 ms; the bare submit app (same parse to a temporary file,
// sniff, page count) takes the same upload as the baseline. Target: the API grows by less than 64 MB.
import { randomBytes } from 'node:crypto'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { startApiWithBaselines } from './lib/bare-app.ts'
import { benchWorkspace, median, multipartBody, QUICK, record, sampleRss, sleep } from './lib/kit.ts'

const ROUNDS = QUICK ? 1 : 3

/** A one-page PDF padded to `mb` with an unreferenced stream of incompressible bytes. */
async function bigPdf(mb: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  doc.addPage([595, 842]).drawText('Invoice Number: BIG-1', { x: 50, y: 780, size: 13, font })
  doc.context.register(doc.context.stream(randomBytes(mb * 1024 * 1024 - 64 * 1024)))
  return doc.save()
}

const {
  apps,
  baselines: [bare],
} = await startApiWithBaselines('upload', ['bare-submit.ts'])
try {
  const { key } = await benchWorkspace(apps.baseUrl, 'B')
  const { body, contentType } = multipartBody('files', 'big.pdf', await bigPdf(99))
  /** Sends the upload and returns how far the process's RSS rose above where it was before. */
  const growth = async (url: string, pid: number, headers: Record<string, string>) => {
    await sleep(500)
    global.gc?.()
    const sampler = sampleRss(pid)
    const before = sampler.stop()
    const during = sampleRss(pid)
    const res = await fetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': contentType }, body })
    await res.arrayBuffer()
    await sleep(200)
    const peak = during.stop()
    if (res.status !== 202) throw new Error(`${url} answered ${res.status}`)
    return peak - before
  }
  // Warm-up with a small file, so first-use allocations are not counted.
  const small = multipartBody('files', 'small.pdf', await bigPdf(1))
  for (const url of [`${apps.baseUrl}/v1/jobs`, `${bare.url}/v1/jobs`]) {
    await fetch(url, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': small.contentType },
      body: small.body,
    }).then((r) => r.arrayBuffer())
  }
  const quire: number[] = []
  const baseline: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    quire.push(await growth(`${apps.baseUrl}/v1/jobs`, apps.pid('api'), { 'X-API-Key': key }))
    baseline.push(await growth(`${bare.url}/v1/jobs`, bare.pid, {}))
  }
  const value = median(quire)
  const base = median(baseline)
  record({
    scenario: 'upload',
    metric: 'API RSS growth during one 99 MB upload',
    value,
    baseline: base,
    ratio: Math.max(base, 1) / Math.max(value, 1),
    unit: 'MB',
    target: '< 64 MB',
  })
} finally {
  await bare.stop()
  await apps.stop()
}
