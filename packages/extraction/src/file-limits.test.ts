import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { docxBomb, pngBomb } from '../../../tests/fixtures/bombs.ts'
import { makeBmp, makeDocx, makeDocxWithStoredPages, makeTempDir, makeTextPdf, writeFixture } from '../test/fixtures.ts'
import { inspectDocx } from './docx-limits.ts'
import { readDocxText } from './docx.ts'
import { checkPageLimit } from './count-pages.ts'
import { configureFileLimits, DEFAULT_FILE_LIMITS, fileLimits } from './file-limits.ts'
import { imagePageForOcr } from './image-pages.ts'
import { countPages, parseDocument, verifyReadable } from './index.ts'

// DESIGN "Robustness and operations": what a file may cost is bounded while it is read (uncompressed size, entry
// count and ratio of DOCX/ZIP, pixels of images), and page counts that credits depend on come from the content.
let tmp: Awaited<ReturnType<typeof makeTempDir>>
beforeAll(async () => {
  tmp = await makeTempDir()
})
afterAll(async () => {
  await tmp.cleanup()
})
afterEach(() => {
  configureFileLimits()
})

const rssMb = () => process.memoryUsage().rss / 1024 / 1024

describe('DOCX decompression bombs', () => {
  // Built once, outside the test it feeds: deflating 400 MB takes about a second of its own.
  let bomb: Buffer
  beforeAll(async () => {
    bomb = await docxBomb(400)
  })

  it('a 400 KB DOCX that inflates to 400 MB is refused while inflating, with memory bounded', async () => {
    expect(bomb.length).toBeLessThan(1024 * 1024)
    const path = await writeFixture(tmp.file('bomb.docx'), bomb)
    const before = rssMb()
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb())
    }, 5)
    try {
      for (const read of [
        () => inspectDocx(path),
        () => countPages(path, 'docx'),
        () => verifyReadable(path, 'docx'),
      ]) {
        await expect(read()).rejects.toMatchObject({ name: 'ExtractionError', code: 'too_large' })
      }
      await expect(readDocxText(path)).rejects.toThrow(/decompression bomb/)
    } finally {
      clearInterval(sampler)
    }
    expect(peak - before).toBeLessThan(150)
  })

  it('each DOCX limit trips on its own: inflated total, XML, entries, ratio', async () => {
    const path = await writeFixture(tmp.file('bomb-4.docx'), await docxBomb(4))
    const loose = { ...DEFAULT_FILE_LIMITS, maxXmlBytes: 2 ** 40, maxCompressionRatio: 2 ** 30 }
    await expect(inspectDocx(path, loose)).resolves.toMatchObject({ textChars: 4 * 1024 * 1024 + 1 }) // + the paragraph end
    await expect(inspectDocx(path, { ...loose, maxUncompressedBytes: 1024 * 1024 })).rejects.toThrow(
      /more than 1 MB inflated/,
    )
    await expect(inspectDocx(path, { ...loose, maxXmlBytes: 1024 * 1024 })).rejects.toThrow(/more than 1 MB of XML/)
    await expect(inspectDocx(path, { ...loose, maxZipEntries: 2 })).rejects.toThrow(/3 entries, at most 2/)
    // The defaults: 4 MB of one letter compresses far beyond 200×.
    await expect(inspectDocx(path)).rejects.toThrow(/word\/document\.xml inflates more than 200×/)
    // Configured for the process, as the apps do from QUIRE_MAX_* at start.
    configureFileLimits({ maxZipEntries: 2 })
    await expect(countPages(path, 'docx')).rejects.toMatchObject({ code: 'too_large' })
  })

  it('a real 300-page document passes the default limits', async () => {
    const paragraph = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(8).trim()
    const path = await writeFixture(
      tmp.file('long.docx'),
      await makeDocx(Array.from({ length: 300 * 6 }, (_, i) => `${i + 1}. ${paragraph}`)),
    )
    const pages = await countPages(path, 'docx')
    expect(pages).toBeGreaterThanOrEqual(300)
    await expect(verifyReadable(path, 'docx')).resolves.toBeUndefined()
  })

  it('counts the text of a real document as a reader would', async () => {
    const paragraph = 'Lorem ipsum dolor sit amet & consectetur adipiscing elit. '.repeat(10).trim()
    const path = await writeFixture(tmp.file('real.docx'), await makeDocx(Array.from({ length: 20 }, () => paragraph)))
    const { textChars } = await inspectDocx(path)
    const text = await readDocxText(path)
    expect(Math.abs(textChars - text.length) / text.length).toBeLessThan(0.02)
  })

  it('billing pages come from the content: a 93-page document claiming <Pages>1</Pages> counts 93', async () => {
    const paragraph = 'x'.repeat(2999)
    const path = await writeFixture(
      tmp.file('liar.docx'),
      makeDocxWithStoredPages(
        Array.from({ length: 93 }, () => paragraph),
        1,
      ),
    )
    expect(await countPages(path, 'docx')).toBe(93)
  })
})

describe('image pixel limit', () => {
  it('a 30000 × 30000 PNG fails as too large (not as damaged), without decoding it', async () => {
    const path = await writeFixture(tmp.file('huge.png'), await pngBomb(30_000))
    const before = rssMb()
    await expect(verifyReadable(path, 'png')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringMatching(/megapixels/),
    })
    expect(rssMb() - before).toBeLessThan(150)
  })

  it('the parse path (OCR input) refuses it too, as too large, before OCR starts', async () => {
    const path = await writeFixture(tmp.file('huge-parse.png'), await pngBomb(30_000))
    const before = rssMb()
    await expect(imagePageForOcr(path, 'png')).rejects.toMatchObject({ code: 'too_large' })
    await expect(parseDocument(path, 'png')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringMatching(/more than 300 megapixels/),
    })
    expect(rssMb() - before).toBeLessThan(150)
  })

  it('the pixel limit is configurable', async () => {
    const png = await sharp({ create: { width: 2000, height: 1000, channels: 3, background: '#fff' } })
      .png()
      .toBuffer()
    const path = await writeFixture(tmp.file('two-mp.png'), png)
    await expect(verifyReadable(path, 'png')).resolves.toBeUndefined()
    configureFileLimits({ maxImagePixels: 1_000_000 })
    await expect(verifyReadable(path, 'png')).rejects.toMatchObject({ code: 'too_large' })
    await expect(imagePageForOcr(path, 'png')).rejects.toMatchObject({ code: 'too_large' })
  })

  it('a BMP (read by tesseract, not sharp) is held to the limit from its header', async () => {
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#fff' } })
      .png()
      .toBuffer()
    const bmp = await makeBmp(png)
    const path = await writeFixture(tmp.file('small.bmp'), bmp)
    await expect(verifyReadable(path, 'bmp')).resolves.toBeUndefined()
    // An RLE BMP may declare any size in a few bytes: 30000 × 30000 in the header.
    const huge = Buffer.from(bmp)
    huge.writeInt32LE(30_000, 18)
    huge.writeInt32LE(-30_000, 22)
    const hugePath = await writeFixture(tmp.file('huge.bmp'), huge)
    await expect(verifyReadable(hugePath, 'bmp')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringMatching(/BMP image has more than 300 megapixels/),
    })
    await expect(imagePageForOcr(hugePath, 'bmp')).rejects.toMatchObject({ code: 'too_large' })
  })
})

describe('page limit', () => {
  it('defaults to 5,000 pages; refused values are not accepted as limits', () => {
    expect(fileLimits().maxPages).toBe(5000)
    expect(() => configureFileLimits({ maxPages: 0 })).toThrow(/maxPages/)
  })

  it('a PDF or TIFF of more than QUIRE_MAX_PAGES pages is too large (intake check and initialization)', async () => {
    configureFileLimits({ maxPages: 3 })
    const over = await writeFixture(tmp.file('over.pdf'), await makeTextPdf([[], [], [], []]))
    expect(await countPages(over, 'pdf')).toBe(4)
    expect(() => checkPageLimit('pdf', 4)).toThrow(/PDF has 4 pages; Quire reads at most 3/)
    expect(() => checkPageLimit('tiff', 4)).toThrow(/TIFF has 4 pages/)
    expect(() => checkPageLimit('docx', 4)).not.toThrow()
    await expect(verifyReadable(over, 'pdf')).rejects.toMatchObject({ code: 'too_large' })
    const atLimit = await writeFixture(tmp.file('limit.pdf'), await makeTextPdf([[], [], []]))
    await expect(verifyReadable(atLimit, 'pdf')).resolves.toBeUndefined()
  })
})
