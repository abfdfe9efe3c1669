// CPU-heavy documents, black box (issue 10; DESIGN "Processing lifecycle"): PDF parsing, rasterising and OCR run off
// the stage worker's event loop (child parse processes), so BullMQ lock renewal never stalls (the worker's own
// event-loop delay figures stay under 1 s, and no job is reported stalled); a 300-page PDF and a multi-page TIFF go
// through with bounded worker memory; Form A machine_seconds is the CPU time the stages used, checked against what
// the kernel counted for the stage worker's process tree.
import { readdirSync, readFileSync } from 'node:fs'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { textPdf, textPng } from '../fixtures/make-fixtures.ts'
import { call, fileForm, newWorkspace } from './client.ts'
import { startStack, type Stack } from './stack.ts'

let stack: Stack
beforeAll(async () => {
  // A short lock: a stage worker whose event loop stalled for 2 s would lose its job (stalled, run again).
  // Debug: the stage worker logs its event-loop delay every 5 s (a block of 500 ms or more as a warning).
  stack = await startStack({ env: { QUIRE_STAGE_LOCK_MS: '2000', QUIRE_LOG_LEVEL: 'debug' } })
}, 120_000)
afterAll(async () => stack?.stop())

const rssOf = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}
const childrenOf = (pid: number): number[] => {
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(d))
    } catch {}
  }
  return out
}

/** Fields 14.. of /proc/<pid>/stat (utime, stime, cutime, cstime), in USER_HZ ticks of 10 ms. */
const cpuTicksOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
  } catch {
    return 0
  }
}
/**
 * CPU (ms) the kernel counted for a process and its descendants: each live one's own time plus that of the children
 * it reaped (a parse process's pdftoppm runs, a retired parse process).
 */
const treeCpuMs = (pid: number): number => cpuTicksOf(pid) * 10 + childrenOf(pid).reduce((n, c) => n + treeCpuMs(c), 0)

type LoopWindow = { maxMs: number; p99Ms: number; time: number }
/** The stage worker's event-loop figures (main.ts logs one per 5 s window: debug, or warn when blocked). */
const loopWindows = (lines: string[]): LoopWindow[] =>
  lines
    .join('')
    .split('\n')
    .filter((l) => l.includes('"msg":"event loop ') && l.endsWith('}'))
    .map((l) => JSON.parse(l) as LoopWindow)

describe('heavy documents off the event loop', () => {
  it('a 300-page PDF and a 6-page TIFF: parse runs once (no stalled lock), RSS stays bounded, machine_seconds is CPU time', async () => {
    const pages = Array.from({ length: 300 }, (_, i) => [
      `Statement page ${i + 1} of 300`,
      `Account 4711-${i} balance carried forward 1,${String(i).padStart(3, '0')}.00 EUR`,
    ])
    const pdf = await textPdf(pages)
    const frames = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(async (n) => textPng([`Delivery note ${n}`, `Parcel ${n}0${n} received in good order`])),
    )
    const tiff = await sharp(frames, { join: { animated: true } })
      .tiff({ compression: 'lzw' })
      .toBuffer()
    const { key } = await newWorkspace(stack.baseUrl, 'A', { credits: 1000 })
    const p = await call(stack.baseUrl, 'POST', '/v1/pipelines', { key, json: { name: 'heavy' } })
    await call(stack.baseUrl, 'POST', `/v1/pipelines/${p.body.id}/versions/1/publish`, { key })
    const worker = stack.pid('stage-worker')!
    const peak = { worker: rssOf(worker), children: 0 }
    const sampler = setInterval(() => {
      peak.worker = Math.max(peak.worker, rssOf(worker))
      peak.children = Math.max(
        peak.children,
        childrenOf(worker).reduce((n, c) => n + rssOf(c), 0),
      )
    }, 100)
    const cpuBefore = treeCpuMs(worker)
    const started = Date.now()
    const r = await call(stack.baseUrl, 'POST', '/v1/jobs', {
      key,
      form: fileForm(
        'file',
        [
          { name: 'statement-300.pdf', bytes: pdf },
          { name: 'notes-6.tiff', bytes: tiff },
        ],
        { pipeline_id: p.body.id },
      ),
    })
    expect(r.status).toBe(202)
    let done: Awaited<ReturnType<typeof call>>
    for (;;) {
      done = await call(stack.baseUrl, 'GET', `/v1/jobs/${r.body.id}`, { key })
      if (done.body.status !== 'processing' || Date.now() - started > 600_000) break
      await new Promise((res) => setTimeout(res, 500))
    }
    clearInterval(sampler)
    const treeSeconds = (treeCpuMs(worker) - cpuBefore) / 1000
    const wallSeconds = (Date.now() - started) / 1000
    expect(done.body.status).toBe('completed')
    expect(done.body.documents.map((d: { status: string }) => d.status)).toEqual(['completed', 'completed'])
    // Spec: machine_seconds is an integer; here the CPU time measured in the stages (parse processes included).
    const machineSeconds = done.body.machine_seconds
    expect(Number.isInteger(machineSeconds)).toBe(true)
    console.log(
      `heavy documents: wall ${wallSeconds.toFixed(1)} s, machine_seconds ${machineSeconds}, ` +
        `stage-worker process tree CPU ${treeSeconds.toFixed(1)} s, ` +
        `peak RSS stage-worker ${(peak.worker / 2 ** 20).toFixed(0)} MiB, ` +
        `parse processes ${(peak.children / 2 ** 20).toFixed(0)} MiB`,
    )
    // machine_seconds is the CPU the stages used: never more than the stage worker's process tree used meanwhile
    // (each stage is charged its share; ceil to whole seconds), and at least half of it — the rest is the parse
    // process starting (about 2 s of module loading), the worker between stages, the sweepers (measured: 5 of
    // 7.4 s on a slow host; 1.94 s of tree CPU on a fast one). Parse CPU counted twice, or the parse processes' (OCR,
    // parsing) not counted, both fail here. The floor only checks that the job did real work: the CPU a host needs
    // for it varies several-fold.
    expect(treeSeconds).toBeGreaterThan(1)
    expect(machineSeconds).toBeGreaterThanOrEqual(1)
    expect(machineSeconds).toBeLessThanOrEqual(Math.ceil(treeSeconds) + 1)
    expect(machineSeconds).toBeGreaterThanOrEqual(Math.floor(treeSeconds * 0.5))
    // Bounded memory: the worker holds no document (the parse processes do, one at a time each).
    expect(peak.worker).toBeLessThan(700 * 2 ** 20)
    expect(peak.children).toBeLessThan(2 * 1.6 * 2 ** 30)
    // No stalled lock: BullMQ never took the parse stage away from a worker whose event loop was blocked.
    const docs = await call(stack.baseUrl, 'GET', `/v1/documents/${done.body.documents[1].id}`, { key })
    expect(docs.body.data).toBeTruthy()
    const logs = stack.logs['stage-worker'].join('')
    expect(logs).not.toMatch(/stalled/i)
    // The event loop was never held for 1 s or more: every 5 s window the worker measured while the documents went
    // through (and the one after) stayed under it. Waits for the window that covers the job's end.
    const finished = Date.now()
    await new Promise((res) => setTimeout(res, 5_500))
    const windows = loopWindows(stack.logs['stage-worker']).filter((w) => w.time >= started - 5_000)
    expect(windows.length).toBeGreaterThanOrEqual(Math.floor((finished - started) / 5_000))
    const worst = Math.max(...windows.map((w) => w.maxMs))
    console.log(`heavy documents: ${windows.length} event-loop windows, worst delay ${worst} ms`)
    expect(worst).toBeLessThan(1_000)
  }, 660_000)
})
