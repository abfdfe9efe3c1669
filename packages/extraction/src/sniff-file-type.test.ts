import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { randomBytes } from 'node:crypto'
import { FILE_TYPE_MIME, FILE_TYPES, SNIFF_HEAD_BYTES, sniffFileType, sniffFileTypeFromHead } from './index.ts'
import {
  makeBmp,
  makeDocx,
  makeImagePdf,
  makeMultiPageTiff,
  makeTempDir,
  makeTextPdf,
  renderTextPng,
  writeFixture,
} from '../test/fixtures.ts'

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

  it('answers from the head of an upload as from the file, or defers to the file', async () => {
    // Noise does not compress: these pass the head's size, so the head holds only their start.
    const noise = await sharp(randomBytes(300 * 300 * 3), { raw: { width: 300, height: 300, channels: 3 } })
      .png()
      .toBuffer()
    const paragraph = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40)
    const docx = await makeDocx(['hello'])
    const files: Record<string, Uint8Array | Buffer | string> = {
      pdf: await makeTextPdf([['hello']]),
      'pdf-large': await makeImagePdf([noise]),
      docx,
      'docx-large': await makeDocx(Array.from({ length: 400 }, (_, i) => `${i} ${paragraph}`)),
      'docx-truncated': docx.subarray(0, Math.floor(docx.length / 2)),
      png,
      'png-large': noise,
      jpeg: await sharp(png).jpeg().toBuffer(),
      'jpeg-large': await sharp(noise).jpeg({ quality: 100 }).toBuffer(),
      tiff: await sharp(png).tiff().toBuffer(),
      'tiff-large': await makeMultiPageTiff([noise, noise]),
      'tiff-truncated': (await makeMultiPageTiff([noise, noise])).subarray(0, 200 * 1024),
      bmp: await makeBmp(png),
      'bmp-large': await makeBmp(noise),
      gif: await sharp(png).gif().toBuffer(),
      webp: await sharp(png).webp().toBuffer(),
      'webp-large': await sharp(noise).webp({ lossless: true }).toBuffer(),
      text: 'Invoice No: 1\nTotal: 10.00\n',
      'text-large': 'Invoice No: 1\n'.repeat(10_000),
      empty: '',
      zip: Buffer.from(`504b0506${'00'.repeat(18)}`, 'hex'),
      encrypted: Buffer.concat([
        Buffer.from('d0cf11e0a1b11ae1', 'hex'),
        Buffer.alloc(500),
        Buffer.from('EncryptedPackage', 'utf16le'),
      ]),
    }
    const answeredLarge: string[] = []
    for (const [name, data] of Object.entries(files)) {
      const bytes = Buffer.from(data)
      const path = await writeFixture(tmp.file(`head-${name}`), bytes)
      const fromFile = await sniffFileType(path)
      const fromHead = await sniffFileTypeFromHead(bytes.subarray(0, SNIFF_HEAD_BYTES), bytes.length)
      if (bytes.length <= SNIFF_HEAD_BYTES) {
        expect(fromHead, name).toEqual(fromFile)
      } else if (fromHead === undefined) {
        // Only what file-type tells from deeper in: a zip's entries, or nothing at all from the head.
        expect([null, 'docx'], name).toContain(fromFile?.type ?? null)
      } else {
        expect(fromHead, name).toEqual(fromFile)
        answeredLarge.push(name)
      }
    }
    // Past the head, the types named by their leading bytes are answered from it.
    expect(answeredLarge).toEqual(
      expect.arrayContaining([
        'pdf-large',
        'png-large',
        'jpeg-large',
        'tiff-large',
        'tiff-truncated',
        'bmp-large',
        'webp-large',
      ]),
    )
  })
})
