import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { WARM_UP_TEXT } from './warm-up-scan.ts'

const script = fileURLToPath(new URL('../test/warm-parse-pool.ts', import.meta.url))
const root = path.resolve(path.dirname(script), '..', '..', '..')
/** Words of the warm-up page's first line that OCR reads alike on every run (its punctuation varies). */
const WARM_UP_WORDS = 'Invoice 2026'

describe('parse pool warm start (QUIRE_PARSE_WARM_START)', () => {
  it('starts every parse process before any document, then loads each OCR model and reads a first scanned page; documents parse as before', {
    timeout: 120_000,
  }, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', script],
      { cwd: root, timeout: 110_000 },
    )
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      processes: { rssBytes: number; ocrText?: string }[]
      ocr: { rssBytes: number; ocrText?: string }[]
      text: string
    }
    expect(WARM_UP_TEXT).toContain(WARM_UP_WORDS) // the words looked for below are on the page
    // One answer per process, from a running child.
    expect(seen.processes).toHaveLength(2)
    expect(seen.ocr).toHaveLength(2)
    for (const [i, warm] of seen.processes.entries()) {
      expect(warm.rssBytes).toBeGreaterThan(0)
      // The OCR model (about 170 MB with its engine) is in each child's memory once `ocr` answered.
      expect(seen.ocr[i]!.rssBytes - warm.rssBytes).toBeGreaterThan(50 * 1024 * 1024)
      // Each child read the warm-up page through the scanned-PDF path (rasterised, then OCR), before any document.
      expect(seen.ocr[i]!.ocrText).toContain(WARM_UP_WORDS)
      expect(warm.ocrText).toBeUndefined()
    }
    expect(seen.text).toContain('WARM-1')
  })

  it('warms the Paddle engine the same way (QUIRE_OCR_ENGINE=paddle): its models load and it reads the page', {
    timeout: 120_000,
  }, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@quire/source', '--import', 'tsx', script, 'paddle', '1'],
      { cwd: root, timeout: 110_000 },
    )
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      processes: { rssBytes: number }[]
      ocr: { rssBytes: number; ocrText?: string }[]
    }
    expect(seen.ocr).toHaveLength(1)
    // PP-OCRv4's two models and ONNX Runtime are in the child's memory once `ocr` answered.
    expect(seen.ocr[0]!.rssBytes - seen.processes[0]!.rssBytes).toBeGreaterThan(50 * 1024 * 1024)
    expect(seen.ocr[0]!.ocrText).toContain('2026')
    expect(seen.ocr[0]!.ocrText).toContain('1,234.56')
  })
})
