import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { countPages, sniffFileType, verifyReadable } from './index.ts'
import { makeDocx, makeMultiPageTiff, makeTempDir, makeTextPdf, renderTextPng, writeFixture } from '../test/fixtures.ts'

const half = (b: Uint8Array | Buffer) => Buffer.from(b).subarray(0, Math.floor(b.length / 2))

/** A CFB container naming the streams of an encrypted OOXML package (only header and directory names are real). */
function encryptedOfficeContainer(): Buffer {
  const file = Buffer.alloc(4096)
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(file, 0)
  Buffer.from('EncryptionInfo', 'utf16le').copy(file, 1024 + 128)
  Buffer.from('EncryptedPackage', 'utf16le').copy(file, 1024 + 256)
  return file
}

// DESIGN, "Processing lifecycle": intake refuses only unrecognised types; damaged content of a recognised type is
// recognised here and fails in initialization through verifyReadable.
describe('damaged, truncated and encrypted files', { timeout: 30_000 }, () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>
  let png: Buffer

  beforeAll(async () => {
    tmp = await makeTempDir()
    png = await renderTextPng(['Quire damaged file test'], { width: 500 })
  })
  afterAll(() => tmp.cleanup())

  it('keeps their type: a truncated TIFF or DOCX and an encrypted DOCX are still recognised', async () => {
    const tiff = await writeFixture(tmp.file('t.tiff'), half(await sharp(png).tiff().toBuffer()))
    expect((await sniffFileType(tiff))?.type).toBe('tiff')
    const docx = await writeFixture(tmp.file('d.docx'), half(await makeDocx(['hello '.repeat(400)])))
    expect((await sniffFileType(docx))?.type).toBe('docx')
    const encrypted = await writeFixture(tmp.file('e.docx'), encryptedOfficeContainer())
    expect((await sniffFileType(encrypted))?.type).toBe('docx')
    // A CFB container without an encrypted package (an old .doc, an .msi) is not accepted.
    const plainCfb = await writeFixture(tmp.file('old.doc'), encryptedOfficeContainer().fill(0, 1024))
    expect(await sniffFileType(plainCfb)).toBeNull()
  })

  it('verifyReadable: sound files pass, every page of a multi-page TIFF decodes', async () => {
    await verifyReadable(await writeFixture(tmp.file('ok.pdf'), await makeTextPdf([['a'], ['b']])), 'pdf')
    await verifyReadable(await writeFixture(tmp.file('ok.docx'), await makeDocx(['hello'])), 'docx')
    await verifyReadable(await writeFixture(tmp.file('ok.tiff'), await makeMultiPageTiff([png, png, png])), 'tiff')
    for (const type of ['png', 'jpeg', 'webp'] as const) {
      await verifyReadable(await writeFixture(tmp.file(`ok.${type}`), await sharp(png).toFormat(type).toBuffer()), type)
    }
  })

  it('verifyReadable names the cause: corrupt_file for truncated content, encrypted for an encrypted DOCX', async () => {
    const cases: [string, Buffer, Parameters<typeof verifyReadable>[1]][] = [
      ['pdf', half(await makeTextPdf([['a']])), 'pdf'],
      ['docx', half(await makeDocx(['hello '.repeat(400)])), 'docx'],
      ['png', half(png), 'png'],
      ['jpeg', half(await sharp(png).jpeg().toBuffer()), 'jpeg'],
      ['webp', half(await sharp(png).webp().toBuffer()), 'webp'],
      ['tiff', half(await makeMultiPageTiff([png, png, png])), 'tiff'],
    ]
    for (const [name, bytes, type] of cases) {
      const path = await writeFixture(tmp.file(`bad.${name}`), bytes)
      await expect(verifyReadable(path, type), name).rejects.toMatchObject({ code: 'corrupt_file' })
    }
    const encrypted = await writeFixture(tmp.file('enc.docx'), encryptedOfficeContainer())
    await expect(verifyReadable(encrypted, 'docx')).rejects.toMatchObject({ code: 'encrypted' })
    // countPages cannot count them either; intake then reserves one page (core).
    await expect(countPages(encrypted, 'docx')).rejects.toMatchObject({ name: 'ExtractionError' })
  })
})
