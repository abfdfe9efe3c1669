// A child process of the parse pool (parse-pool.ts): runs parseDocument for its parent, one request at a time, so
// PDF parsing, rasterising and OCR never hold the parent's event loop. The OCR engine is started once and reused.
import { isExtractionError } from './errors.ts'
import type { FileType } from './file-types.ts'
import { createOcrEngine } from './ocr.ts'
import { parseDocument } from './parse-document.ts'

type Request = { id: number; path: string; type: FileType }

const ocr = createOcrEngine({ workers: Math.max(1, Number(process.env.QUIRE_OCR_WORKERS ?? 1) || 1) })

process.on('message', async (msg: Request) => {
  const before = process.cpuUsage()
  try {
    const result = await parseDocument(msg.path, msg.type, { ocr })
    const cpu = process.cpuUsage(before)
    process.send?.({
      id: msg.id,
      ok: true,
      result,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rss: process.memoryUsage().rss,
    })
  } catch (err) {
    const cpu = process.cpuUsage(before)
    process.send?.({
      id: msg.id,
      ok: false,
      error: {
        name: (err as Error)?.name ?? 'Error',
        message: (err as Error)?.message ?? String(err),
        code: isExtractionError(err) ? err.code : undefined,
      },
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rss: process.memoryUsage().rss,
    })
  }
})

process.on('disconnect', () => {
  void ocr.close().finally(() => process.exit(0))
})
