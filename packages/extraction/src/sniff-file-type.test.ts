import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { FILE_TYPE_MIME, FILE_TYPES, sniffFileType } from './index.ts'
import { makeBmp, makeDocx, makeTempDir, makeTextPdf, renderTextPng, writeFixture } from '../test/fixtures.ts'

describe('sniffFileType', { timeout: 30_000 }, () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>
  let png: Buffer

  beforeAll(async () => {
    tmp = await makeTempDir()
    png = await renderTextPng(['Quire sniff test'], { width: 400 })
  })
  afterAll(() => tmp.cleanup())

  it('recognises every accepted type by content, whatever the file is called', async () => {
    const files: Record<string, Uint8Array | Buffer> = {
      pdf: await makeTextPdf([['hello']]),
      docx: await makeDocx(['hello']),
      png,
      jpeg: await sharp(png).jpeg().toBuffer(),
      tiff: await sharp(png).tiff().toBuffer(),
      bmp: await makeBmp(png),
      gif: await sharp(png).gif().toBuffer(),
      webp: await sharp(png).webp().toBuffer(),
    }
    for (const type of FILE_TYPES) {
      // Misleading names on purpose: the name must not matter.
      const path = await writeFixture(tmp.file(`upload-${type}.txt`), files[type]!)
      expect(await sniffFileType(path), type).toEqual({ type, mime: FILE_TYPE_MIME[type] })
    }
  })

  it('rejects a text file renamed to .pdf, an empty file and a plain zip', async () => {
    const text = await writeFixture(tmp.file('invoice.pdf'), 'Invoice No: 1\nTotal: 10.00\n')
    expect(await sniffFileType(text)).toBeNull()
    const empty = await writeFixture(tmp.file('empty.png'), '')
    expect(await sniffFileType(empty)).toBeNull()
    // A zip that is not a Word document (here: an xlsx-less bare zip made from a stored entry).
    const zip = Buffer.from(`504b0506${'00'.repeat(18)}`, 'hex')
    expect(await sniffFileType(await writeFixture(tmp.file('doc.docx'), zip))).toBeNull()
  })
})
