// A child process of the parse pool (parse-pool.ts): runs parseDocument for its parent, one request at a time, so
// PDF parsing, rasterising and OCR never hold the parent's event loop. The OCR engine is started once and reused.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { isExtractionError } from './errors.ts'
import { configureFileLimits, type FileLimits } from './file-limits.ts'
import type { FileType } from './file-types.ts'
import { createOcrEngine, DEFAULT_OCR_ENGINE, OCR_ENGINES } from './create-ocr-engine.ts'
import type { DocumentLanguage } from './detect-language.ts'
import { parseDocument } from './parse-document.ts'
import { warmUpScanPdf } from './warm-up-scan.ts'

type Request =
  | { id: number; path: string; type: FileType; limits?: Partial<FileLimits>; languages?: DocumentLanguage[] }
  /** A warm start (parse-pool.ts `warm`): load what the first document would, then answer. */
  | { id: number; warm: 'ocr' | 'processes' }

// The parent (parse-pool.ts) passes its engine options in the environment it starts this process with.
const engine = OCR_ENGINES.find((e) => e === process.env.QUIRE_OCR_ENGINE) ?? DEFAULT_OCR_ENGINE
const ocr = createOcrEngine({ engine, workers: Math.max(1, Number(process.env.QUIRE_OCR_WORKERS ?? 1) || 1) })

/**
 * CPU (ms) of the processes this one started and has reaped (pdftoppm): cutime + cstime of /proc/self/stat, in
 * USER_HZ ticks (100 per second on Linux). process.cpuUsage() counts only this process (all its threads, so the
 * tesseract.js workers); 0 where /proc is not there.
 */
function reapedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 (state) of proc(5): cutime is field 16, cstime field 17.
    const ms = (Number(fields[13]) + Number(fields[14])) * 10
    return Number.isFinite(ms) ? ms : 0
  } catch {
    return 0
  }
}

/** CPU (ms) this request used: this process's since `before`, plus that of the processes it ran meanwhile. */
function cpuSince(before: { self: NodeJS.CpuUsage; children: number }): number {
  const self = process.cpuUsage(before.self)
  return Math.round((self.user + self.system) / 1000) + Math.max(0, reapedChildrenCpuMs() - before.children)
}

process.on('message', async (msg: Request) => {
  const before = { self: process.cpuUsage(), children: reapedChildrenCpuMs() }
  if ('warm' in msg) {
    // This process has loaded its modules by now; the OCR engine loads its model, and reads a first scanned page,
    // only when asked to.
    let failed: string | null = null
    let ocrText: string | undefined
    if (msg.warm === 'ocr') {
      try {
        await ocr.start()
        ocrText = await readWarmUpScan()
      } catch (err) {
        failed = (err as Error)?.message ?? String(err)
      }
    }
    process.send?.({
      id: msg.id,
      ok: failed === null,
      warmed: true,
      error: failed,
      ocrText,
      rss: process.memoryUsage().rss,
    })
    return
  }
  try {
    configureFileLimits(msg.limits)
    const result = await parseDocument(msg.path, msg.type, {
      ocr,
      ...(msg.languages?.length ? { languages: msg.languages } : {}),
    })
    process.send?.({
      id: msg.id,
      ok: true,
      result,
      cpuMs: cpuSince(before),
      rss: process.memoryUsage().rss,
    })
  } catch (err) {
    process.send?.({
      id: msg.id,
      ok: false,
      error: {
        name: (err as Error)?.name ?? 'Error',
        message: (err as Error)?.message ?? String(err),
        code: isExtractionError(err) ? err.code : undefined,
      },
      cpuMs: cpuSince(before),
      rss: process.memoryUsage().rss,
    })
  }
})

/** Parses the warm-up page (warm-up-scan.ts) as a client's scanned PDF would be; returns what OCR read on it. */
async function readWarmUpScan(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quire-warm-up-'))
  try {
    const file = path.join(dir, 'warm-up.pdf')
    await writeFile(file, await warmUpScanPdf())
    configureFileLimits()
    const parsed = await parseDocument(file, 'pdf', { ocr })
    return parsed.pages.join('\n')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

process.on('disconnect', () => {
  // The parent is gone: stop the OCR engine and exit, and exit anyway if stopping it hangs (a page mid-recognition).
  setTimeout(() => process.exit(0), 2_000).unref()
  void ocr.close().finally(() => process.exit(0))
})
