// The extraction baseline: what the stages compute for one file, as plain calls in one process — sniff, page count,
// parse (OCR where a page has no text), then field extraction — with no queue, database or HTTP around them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { countPages, createOcrEngine, extractInvoice, parseDocument, sniffFileType } from '@quire/extraction'

export async function extractionLoop(files: Uint8Array[]): Promise<{ seconds: number; pages: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-loop-'))
  const ocr = createOcrEngine({ workers: 1 })
  try {
    const paths = files.map((bytes, i) => {
      const p = path.join(dir, `${i}.pdf`)
      writeFileSync(p, bytes)
      return p
    })
    let pages = 0
    const t0 = performance.now()
    for (const p of paths) {
      const sniffed = await sniffFileType(p)
      if (!sniffed) throw new Error('unrecognised bench document')
      pages += await countPages(p, sniffed.type)
      const parsed = await parseDocument(p, sniffed.type, { ocr })
      extractInvoice({ pages: parsed.pages, layouts: parsed.layouts })
    }
    return { seconds: (performance.now() - t0) / 1000, pages }
  } finally {
    await ocr.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
