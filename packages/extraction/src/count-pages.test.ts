import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { countPages } from './index.ts'
import {
  makeBmp,
  makeDocx,
  makeDocxWithStoredPages,
  makeImagePdf,
  makeMultiPageTiff,
  makeTempDir,
  makeTextPdf,
  renderTextPng,
  writeFixture,
} from '../test/fixtures.ts'

describe('countPages', { timeout: 30_000 }, () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>
  let png: Buffer

  beforeAll(async () => {
    tmp = await makeTempDir()
    png = await renderTextPng(['page'], { width: 300 })
  })
  afterAll(() => tmp.cleanup())

  it('counts PDF pages, text and image-only', async () => {
    const pages = Array.from({ length: 7 }, (_, i) => [`Page ${i + 1}`])
    expect(await countPages(await writeFixture(tmp.file('seven.pdf'), await makeTextPdf(pages)), 'pdf')).toBe(7)
    expect(await countPages(await writeFixture(tmp.file('scan.pdf'), await makeImagePdf([png, png])), 'pdf')).toBe(2)
  })

  it('counts TIFF pages and 1 for other images', async () => {
    expect(
      await countPages(await writeFixture(tmp.file('three.tiff'), await makeMultiPageTiff([png, png, png])), 'tiff'),
    ).toBe(3)
    expect(await countPages(await writeFixture(tmp.file('one.tiff'), await sharp(png).tiff().toBuffer()), 'tiff')).toBe(
      1,
    )
    expect(await countPages(await writeFixture(tmp.file('a.png'), png), 'png')).toBe(1)
    expect(await countPages(await writeFixture(tmp.file('a.jpg'), await sharp(png).jpeg().toBuffer()), 'jpeg')).toBe(1)
    expect(await countPages(await writeFixture(tmp.file('a.bmp'), await makeBmp(png)), 'bmp')).toBe(1)
    expect(await countPages(await writeFixture(tmp.file('a.gif'), await sharp(png).gif().toBuffer()), 'gif')).toBe(1)
    expect(await countPages(await writeFixture(tmp.file('a.webp'), await sharp(png).webp().toBuffer()), 'webp')).toBe(1)
  })

  it('counts DOCX pages from docProps/app.xml when Word stored them', async () => {
    const path = await writeFixture(tmp.file('stored.docx'), makeDocxWithStoredPages(['Short text.'], 4))
    expect(await countPages(path, 'docx')).toBe(4)
  })

  it('counts DOCX pages as 1 per started 3,000 characters otherwise', async () => {
    const short = await writeFixture(tmp.file('short.docx'), await makeDocx(['Just a line.']))
    expect(await countPages(short, 'docx')).toBe(1)
    const paragraph = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(10).trim() // 569 chars
    const long = await writeFixture(tmp.file('long.docx'), await makeDocx(Array.from({ length: 11 }, () => paragraph)))
    // 11 × 569 characters + 10 line breaks = 6,269 characters → 3 pages.
    expect(await countPages(long, 'docx')).toBe(3)
  })

  it('fails cleanly on a corrupt PDF', async () => {
    const path = await writeFixture(tmp.file('bad.pdf'), '%PDF-1.7\nthis is not really a pdf')
    await expect(countPages(path, 'pdf')).rejects.toMatchObject({ name: 'ExtractionError', code: 'corrupt_file' })
  })
})
