import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { FONT_AVAILABLE, renderTextPng } from '../test/fixtures.ts'
import { configureFileLimits } from './file-limits.ts'
import { boxesFromProbabilities, detectionSize, TEXT_THRESHOLD } from './paddle-detect.ts'
import { createPaddleOcrEngine, type PaddleOcrEngine } from './paddle-ocr.ts'
import { ctcDecode, lineWords } from './paddle-recognise.ts'
import { createCombinedOcrEngine } from './combined-ocr.ts'
import { createTesseractOcrEngine } from './ocr.ts'
import { createOcrEngine } from './create-ocr-engine.ts'

describe('paddle post-processing', () => {
  it('sizes the detector input to multiples of 32 within the longest side', () => {
    expect(detectionSize(1000, 2500, 1600)).toEqual({ width: 640, height: 1600 })
    expect(detectionSize(500, 300, 1600)).toEqual({ width: 512, height: 288 })
  })

  it('finds one box per text region of the probability map, grown back by the unclip distance', () => {
    const [w, h] = [40, 20]
    const map = new Float32Array(w * h)
    // Two "lines": x 2..11 and x 20..35 on rows 5..8; a 2-cell speck at (30, 15) is too thin to keep.
    for (let y = 5; y <= 8; y++) {
      for (let x = 2; x <= 11; x++) map[y * w + x] = 0.9
      for (let x = 20; x <= 35; x++) map[y * w + x] = 0.8
    }
    map[15 * w + 30] = 0.95
    map[15 * w + 31] = 0.95
    const boxes = boxesFromProbabilities(map, w, h)
    expect(boxes).toHaveLength(2)
    const [a, b] = boxes
    // 10 × 4 cells: grown by 10·4·1.5 / (2·14) ≈ 2.14 on each side (clamped to the map on the left).
    expect(a?.x0).toBe(0)
    expect(a?.y0).toBeCloseTo(5 - 2.142857, 4)
    expect(a?.x1).toBeCloseTo(12 + 2.142857, 4)
    expect(a?.score).toBeCloseTo(0.9, 5)
    expect(b?.x0).toBeLessThan(20)
    expect(b?.x1).toBeGreaterThan(36)
  })

  it('drops a region whose mean probability is low', () => {
    const [w, h] = [20, 10]
    const map = new Float32Array(w * h)
    for (let y = 2; y <= 6; y++) for (let x = 2; x <= 12; x++) map[y * w + x] = TEXT_THRESHOLD + 0.05
    expect(boxesFromProbabilities(map, w, h)).toEqual([])
  })

  it('decodes CTC output: repeats merged, blanks dropped, each character at its time step', () => {
    const dictionary = ['A', 'B', ' ']
    const classes = dictionary.length + 1
    // steps: A A blank B blank B space A
    const best = [1, 1, 0, 2, 0, 2, 3, 1]
    const probs = new Float32Array(best.length * classes)
    best.forEach((k, t) => {
      probs[t * classes + k] = 0.9
    })
    const chars = ctcDecode(probs, best.length, classes, dictionary)
    expect(chars.map((c) => c.text).join('')).toBe('ABB A')
    expect(chars.map((c) => c.step)).toEqual([0, 3, 5, 6, 7])
    const words = lineWords(chars, { x0: 100, y0: 10, x1: 180, y1: 30, score: 1 }, 10)
    expect(words.map((w) => w.text)).toEqual(['ABB', 'A'])
    expect(words[0]).toMatchObject({ x0: 100, x1: 160, y0: 10, y1: 30 })
    expect(words[1]).toMatchObject({ x0: 170, x1: 180 })
  })

  it('splits a line at a wide blank gap, but not inside a number', () => {
    const chars = [...'TOTAL80.90'].map((text, i) => ({ text, prob: 0.9, step: i * 2 }))
    // A gap between L (step 8) and 8 (step 10); another between 8 and 0 too narrow for two digits.
    const gaps = [
      { at: 9, width: 0.4 },
      { at: 11, width: 0.4 },
    ]
    const words = lineWords(chars, { x0: 0, y0: 0, x1: 200, y1: 10, score: 1 }, 10, gaps)
    expect(words.map((w) => w.text)).toEqual(['TOTAL', '80.90'])
  })
})

describe.skipIf(!FONT_AVAILABLE)('PaddleOCR engine', { timeout: 120_000 }, () => {
  let paddle: PaddleOcrEngine
  let png: Buffer
  const LINES = ['Invoice Date 12/03/2024', 'Subtotal 1,150.00', 'Total Due 1,380.00']

  beforeAll(async () => {
    configureFileLimits()
    paddle = createPaddleOcrEngine()
    png = await renderTextPng(LINES, { width: 900, fontSize: 30 })
  })
  afterAll(async () => {
    await paddle.close()
  })

  it('reads generated text with word boxes in page fractions and confidences', async () => {
    const result = await paddle.recognize(png)
    const text = result.text.replace(/\s+/g, ' ')
    for (const token of ['Invoice', 'Date', '12/03/2024', 'Subtotal', '1,150.00', 'Total', '1,380.00']) {
      expect(text).toContain(token)
    }
    const total = result.words?.find((w) => w.text === '1,380.00')
    const label = result.words?.find((w) => w.text === 'Due')
    expect(total?.conf).toBeGreaterThan(0.8)
    // The amount sits right of its label on the last line (the lower third of the page).
    expect(total?.box[0]).toBeGreaterThan(label?.box[2] ?? 1)
    expect(total?.box[1]).toBeGreaterThan(0.6)
    expect(total?.box[3]).toBeLessThanOrEqual(1)
    expect(result.confidence).toBeGreaterThan(0.8)
  })

  it('reads a given region without detection', async () => {
    const meta = await sharp(png).metadata()
    const lineHeight = Math.round(30 * 1.6)
    const h = meta.height as number
    // The third line's baseline is at 3 line heights; its text spans about one font size above it.
    const region = [0.02, (3 * lineHeight - 34) / h, 0.5, (3 * lineHeight + 10) / h] as const
    const [reading] = await paddle.recognizeRegions(png, [[...region] as [number, number, number, number]])
    expect(reading?.words.map((w) => w.text).join(' ')).toContain('1,380.00')
  })

  it('refuses an image past the pixel limit before decoding it', async () => {
    configureFileLimits({ maxImagePixels: 1000 })
    try {
      await expect(paddle.recognize(png)).rejects.toMatchObject({ code: 'too_large' })
    } finally {
      configureFileLimits()
    }
  })

  it('reports a missing model as ocr_unavailable', async () => {
    const broken = createPaddleOcrEngine({ modelDir: '/nonexistent' })
    await expect(broken.start()).rejects.toMatchObject({ code: 'ocr_unavailable' })
  })

  it('combined: tesseract first, Paddle on doubted figure lines, words keep boxes', async () => {
    const combined = createCombinedOcrEngine(createTesseractOcrEngine(), paddle)
    try {
      const result = await combined.recognize(png)
      const text = result.text.replace(/\s+/g, ' ')
      expect(text).toContain('1,380.00')
      expect(text).toContain('12/03/2024')
      expect(result.words?.every((w) => w.box[2] > w.box[0] && w.box[3] > w.box[1])).toBe(true)
    } finally {
      await combined.close()
    }
  })
})

describe.skipIf(!FONT_AVAILABLE)('createOcrEngine', { timeout: 120_000 }, () => {
  it('paddle: a BMP (which sharp cannot decode) is read by tesseract instead', async () => {
    const { makeBmp, makeTempDir, writeFixture } = await import('../test/fixtures.ts')
    const tmp = await makeTempDir()
    const engine = createOcrEngine({ engine: 'paddle' })
    try {
      const bmp = await writeFixture(tmp.file('page.bmp'), await makeBmp(await renderTextPng(['Total Due 1,380.00'])))
      const result = await engine.recognize(bmp)
      expect(result.text).toContain('1,380.00')
    } finally {
      await engine.close()
      await tmp.cleanup()
    }
  })

  it('fused: tesseract and Paddle each read the page; parseDocument keeps both readings and extraction fuses them', async () => {
    const { makeTempDir, writeFixture } = await import('../test/fixtures.ts')
    const { parseDocument } = await import('./parse-document.ts')
    const { extractInvoice } = await import('./extract-invoice.ts')
    const { fuseReadings } = await import('./fuse-readings.ts')
    const tmp = await makeTempDir()
    const engine = createOcrEngine({ engine: 'fused' })
    try {
      const png = await writeFixture(
        tmp.file('receipt.png'),
        await renderTextPng(['Date: 25/12/2018', 'Amount Due: 80.90']),
      )
      const parsed = await parseDocument(png, 'png', { ocr: engine })
      expect(parsed.second?.pages).toHaveLength(1)
      expect(parsed.second?.pages[0]).toContain('80.90')
      expect(parsed.second?.layouts[0]?.words.length).toBeGreaterThan(0)
      const fused = fuseReadings(extractInvoice(parsed), extractInvoice(parsed.second ?? parsed))
      expect(fused.amount.value).toBe(80.9)
      // Both readings found it: agreement makes it at least 0.9 sure.
      expect(fused.amount.confidence).toBeGreaterThanOrEqual(0.9)
    } finally {
      await engine.close()
      await tmp.cleanup()
    }
  })
})
