import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { deflateSync } from 'node:zlib'
import fc from 'fast-check'
import { PDFDocument, type PDFRef } from 'pdf-lib'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { countPages } from './count-pages.ts'
import { openPdfByRanges } from './pdf-document.ts'
import { readPdfPageCount, readPdfPageCountFromBytes } from './pdf-page-count.ts'
import { HOLDOUT_LAYOUTS, invoicePage } from '../eval/corpus-layouts.ts'
import { renderPdf, renderScannedPdf } from '../eval/corpus-render.ts'
import { invoiceSpec, rng } from '../eval/corpus-spec.ts'
import { makeImagePdf, makeTempDir, makeTextPdf, makeTwoColumnPdf, writeFixture } from '../test/fixtures.ts'

const MAX_PAGES = 5000

/** pdf.js's page count, or null when it cannot open the file. */
async function pdfjsCount(path: string): Promise<number | null> {
  try {
    const doc = await openPdfByRanges(path)
    try {
      return doc.numPages
    } finally {
      await doc.destroy()
      await doc.closeFile()
    }
  } catch {
    return null
  }
}

/**
 * pdf.js's counts in a child process: on damaged files pdf.js leaves unhandled rejections behind, which would fail
 * this test run.
 */
async function pdfjsCounts(paths: string[]): Promise<(number | null)[]> {
  const script = fileURLToPath(new URL('../test/pdfjs-page-counts.mjs', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...paths], { maxBuffer: 1024 * 1024 })
  return JSON.parse(stdout) as (number | null)[]
}

type Structure = { pages: number; objectStreams: boolean }
type UpdateStyle = 'table' | 'stream' | 'stream-flate'

async function makePdf({ pages, objectStreams }: Structure): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  for (let i = 0; i < pages; i++) pdf.addPage([200, 200])
  return pdf.save({ useObjectStreams: objectStreams })
}

/**
 * Appends an incremental update by hand: a new page tree root (`pagesDict`, by default the first `keep` pages of
 * the current tree) and a new catalog pointing to it, with a cross-reference table or stream whose /Prev is the
 * file's last startxref (or `prev`).
 */
/** /Prev written 10 digits wide (leading zeros are valid), so a test can point it elsewhere without moving bytes. */
const padded = (offset: number) => String(offset).padStart(10, '0')
const lastStartxref = (bytes: Uint8Array) => {
  const text = Buffer.from(bytes).toString('latin1')
  return Number(/startxref\s+(\d+)/.exec(text.slice(text.lastIndexOf('startxref')))![1])
}
/** The file with the /Prev of the cross-reference section at `section` pointing to `to`. */
const repointPrev = (bytes: Uint8Array, section: number, to: number) => {
  const text = Buffer.from(bytes).toString('latin1')
  const at = text.indexOf('/Prev ', section)
  expect(at).toBeGreaterThan(0)
  return Buffer.from(`${text.slice(0, at)}/Prev ${padded(to)}${text.slice(at + 6 + 10)}`, 'latin1')
}

async function appendUpdate(
  bytes: Uint8Array,
  opts: { keep?: number; style: UpdateStyle; pagesDict?: (pagesNum: number) => string; prev?: number },
): Promise<Uint8Array> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false })
  const root = doc.context.trailerInfo.Root as PDFRef
  const kids = doc.getPages().map((p) => p.ref)
  const keep = Math.max(1, Math.min(opts.keep ?? kids.length, kids.length))
  const tail = Buffer.from(bytes).toString('latin1')
  const prev = opts.prev ?? Number(/startxref\s+(\d+)/.exec(tail.slice(tail.lastIndexOf('startxref')))![1])
  // The newest /Size, not pdf-lib's largest object number: that leaves out object and cross-reference streams.
  const sizes = [...tail.matchAll(/\/Size (\d+)/g)].map((m) => Number(m[1]))
  const pagesNum = Math.max(doc.context.largestObjectNumber + 1, sizes.at(-1) ?? 0)
  const xrefNum = pagesNum + 1
  const size = xrefNum + 1
  const pagesBody =
    opts.pagesDict?.(pagesNum) ??
    `<< /Type /Pages /Kids [${kids
      .slice(0, keep)
      .map((r) => `${r.objectNumber} ${r.generationNumber} R`)
      .join(' ')}] /Count ${keep} >>`
  let out = Buffer.from(bytes).toString('latin1')
  if (!out.endsWith('\n')) out += '\n'
  const catalogAt = out.length
  out += `${root.objectNumber} ${root.generationNumber} obj\n<< /Type /Catalog /Pages ${pagesNum} 0 R >>\nendobj\n`
  const pagesAt = out.length
  out += `${pagesNum} 0 obj\n${pagesBody}\nendobj\n`
  const xrefAt = out.length
  if (opts.style === 'table') {
    const entry = (offset: number, gen: number) =>
      `${String(offset).padStart(10, '0')} ${String(gen).padStart(5, '0')} n\r\n`
    out +=
      `xref\n${root.objectNumber} 1\n${entry(catalogAt, root.generationNumber)}${pagesNum} 1\n${entry(pagesAt, 0)}` +
      `trailer\n<< /Size ${size} /Root ${root.objectNumber} ${root.generationNumber} R /Prev ${padded(prev)} >>\n`
  } else {
    const row = (type: number, a: number, b: number) => {
      const r = Buffer.alloc(7)
      r.writeUInt8(type, 0)
      r.writeUInt32BE(a, 1)
      r.writeUInt16BE(b, 5)
      return r
    }
    const rows = Buffer.concat([row(1, catalogAt, root.generationNumber), row(1, pagesAt, 0), row(1, xrefAt, 0)])
    let data = rows
    let filter = ''
    if (opts.style === 'stream-flate') {
      // PNG "Up" predictor, as Acrobat writes it: each row prefixed with filter byte 2, minus the row above.
      const columns = 7
      const predicted = Buffer.alloc(3 * (columns + 1))
      for (let r = 0; r < 3; r++) {
        predicted[r * (columns + 1)] = 2
        for (let c = 0; c < columns; c++) {
          const above = r > 0 ? rows[(r - 1) * columns + c]! : 0
          predicted[r * (columns + 1) + 1 + c] = (rows[r * columns + c]! - above) & 0xff
        }
      }
      data = deflateSync(predicted)
      filter = ` /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns ${columns} >>`
    }
    out +=
      `${xrefNum} 0 obj\n<< /Type /XRef /Size ${size} /W [1 4 2] ` +
      `/Index [${root.objectNumber} 1 ${pagesNum} 2] /Root ${root.objectNumber} ${root.generationNumber} R ` +
      `/Prev ${padded(prev)} /Length ${data.length}${filter} >>\nstream\n`
    out = `${out}${data.toString('latin1')}\nendstream\nendobj\n`
  }
  out += `startxref\n${xrefAt}\n%%EOF\n`
  return new Uint8Array(Buffer.from(out, 'latin1'))
}

/**
 * The reader's answer for a file, checked to be the same from the file and from its bytes in memory (how intake
 * counts an upload kept whole as it streamed).
 */
async function countBoth(path: string): Promise<number | null> {
  const fromFile = await readPdfPageCount(path, MAX_PAGES)
  expect(await readPdfPageCountFromBytes(await readFile(path), MAX_PAGES)).toBe(fromFile)
  return fromFile
}

describe('readPdfPageCount', { timeout: 120_000 }, () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>
  let n = 0
  const write = (bytes: Uint8Array | Buffer) => writeFixture(tmp.file(`${n++}.pdf`), bytes)

  beforeAll(async () => {
    tmp = await makeTempDir()
  })
  afterAll(() => tmp.cleanup())

  it('equals pdf.js on the fixture PDFs and the eval corpus renderer', async () => {
    const png = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#fff' } })
      .png()
      .toBuffer()
    const fixtures = [
      await makeTextPdf([['one']]),
      await makeTextPdf(Array.from({ length: 12 }, (_, i) => [`Page ${i + 1}`])),
      await makeTwoColumnPdf([['Total', '12.00']]),
      await makeImagePdf([png, png, png]),
    ]
    // The eval corpus's text PDFs, one per layout, and a scanned one (eval/build-corpus.ts writes them the same way).
    const r = rng(7)
    for (const [i, layout] of HOLDOUT_LAYOUTS.entries()) {
      const spec = invoiceSpec(r, `count-${i}`, 'de-DE', {
        holdout: true,
        pdfSafe: true,
        reference: layout === 'booking',
      })
      fixtures.push(await renderPdf(invoicePage(spec, layout, 'sans')))
      if (i === 0) fixtures.push(await renderScannedPdf(png, invoicePage(spec, layout, 'sans')))
    }
    for (const bytes of fixtures) {
      const path = await write(bytes)
      const counted = await countBoth(path)
      expect(counted).not.toBeNull()
      expect(counted).toBe(await pdfjsCount(path))
    }
  })

  it('equals pdf.js for generated structures: tables, object streams, incremental updates', async () => {
    const update = fc.record({
      keep: fc.integer({ min: 1, max: 30 }),
      style: fc.constantFrom<UpdateStyle>('table', 'stream', 'stream-flate'),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.boolean(),
        fc.array(update, { maxLength: 3 }),
        async (pages, objectStreams, updates) => {
          let bytes = await makePdf({ pages, objectStreams })
          for (const u of updates) bytes = await appendUpdate(bytes, u)
          const path = await write(bytes)
          const expected = await pdfjsCount(path)
          expect(expected).not.toBeNull()
          // Every structure written here is well formed: the reader answers, and answers as pdf.js does.
          expect(await countBoth(path)).toBe(expected)
        },
      ),
      { numRuns: 60 },
    )
  })

  it('answers null, for pdf.js to decide, on hostile page trees', async () => {
    const base = await makePdf({ pages: 3, objectStreams: false })
    const hostile = {
      negative: (p: number) => `<< /Type /Pages /Kids [] /Count -1 >> % ${p}`,
      huge: () => '<< /Type /Pages /Kids [] /Count 1000000000000 >>',
      aboveLimit: () => `<< /Type /Pages /Kids [] /Count ${MAX_PAGES + 1} >>`,
      fraction: () => '<< /Type /Pages /Kids [] /Count 2.5 >>',
      indirect: () => '<< /Type /Pages /Kids [] /Count 9 0 R >>',
    }
    for (const [, pagesDict] of Object.entries(hostile)) {
      const path = await write(await appendUpdate(base, { style: 'table', pagesDict }))
      expect(await countBoth(path)).toBeNull()
    }
    // The catalog's /Pages names an object no section lists.
    const missing = Buffer.from(await appendUpdate(base, { style: 'table' })).toString('latin1')
    const broken = missing.replace(/\/Pages (\d+) 0 R >>\nendobj\n(?![\s\S]*\/Catalog)/, '/Pages 999 0 R >>\nendobj\n')
    expect(broken).not.toBe(missing)
    expect(await countBoth(await write(Buffer.from(broken, 'latin1')))).toBeNull()
  })

  it('stops at a /Prev cycle instead of following it', async () => {
    const base = await makePdf({ pages: 2, objectStreams: false })
    // An update whose /Prev is its own cross-reference section.
    const once = await appendUpdate(base, { style: 'table' })
    const own = lastStartxref(once)
    expect(await countBoth(await write(once))).toBe(2)
    expect(await countBoth(await write(repointPrev(once, own, own)))).toBeNull()
    // Two updates pointing at each other (a stream and a table).
    const first = await appendUpdate(base, { style: 'stream' })
    const second = await appendUpdate(first, { style: 'table' })
    const loop = repointPrev(second, lastStartxref(first), lastStartxref(second))
    const started = Date.now()
    expect(await countBoth(await write(loop))).toBeNull()
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('never crashes nor counts fewer pages than pdf.js on damaged files', async () => {
    const damage = fc.oneof(
      fc.record({
        kind: fc.constant('flip' as const),
        flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
      }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('digits' as const), at: fc.nat(), digit: fc.integer({ min: 0, max: 9 }) }),
    )
    const answered: { path: string; counted: number }[] = []
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.constantFrom<UpdateStyle | null>(null, 'table', 'stream-flate'),
        damage,
        async (pages, objectStreams, style, hurt) => {
          let bytes = await makePdf({ pages, objectStreams })
          if (style) bytes = await appendUpdate(bytes, { style, keep: Math.max(1, pages - 1) })
          const buf = Buffer.from(bytes)
          let damaged: Buffer
          if (hurt.kind === 'cut') damaged = buf.subarray(0, hurt.at % buf.length)
          else if (hurt.kind === 'flip') {
            damaged = Buffer.from(buf)
            for (const [at, value] of hurt.flips) damaged[at % buf.length] = value
          } else {
            // Change a digit in the structure (offsets, counts, object numbers, /Prev), where damage bites.
            damaged = Buffer.from(buf)
            const digits = [...damaged.keys()].filter((i) => damaged[i]! >= 0x30 && damaged[i]! <= 0x39)
            damaged[digits[hurt.at % digits.length]!] = 0x30 + hurt.digit
          }
          const path = await write(damaged)
          const counted = await countBoth(path)
          if (counted === null) return
          expect(Number.isSafeInteger(counted) && counted >= 1 && counted <= MAX_PAGES).toBe(true)
          answered.push({ path, counted })
        },
      ),
      { numRuns: 300 },
    )
    // Damage that leaves the structure readable must be common enough to mean something.
    expect(answered.length).toBeGreaterThan(20)
    const expected = await pdfjsCounts(answered.map((a) => a.path))
    answered.forEach(({ path, counted }, i) => {
      const pdfjs = expected[i]
      if (pdfjs !== null && pdfjs !== undefined)
        expect({ path, counted }).toEqual({ path, counted: Math.max(counted, pdfjs) })
    })
  })

  it('countPages falls back to pdf.js when the structure is unreadable', async () => {
    // A table whose startxref points nowhere: pdf.js rebuilds the cross-reference and finds the pages.
    const text = Buffer.from(await makePdf({ pages: 4, objectStreams: false })).toString('latin1')
    const noXref = text.replace(/startxref\s+\d+/, 'startxref\n9')
    const path = await write(Buffer.from(noXref, 'latin1'))
    expect(await countBoth(path)).toBeNull()
    expect(await countPages(path, 'pdf')).toBe(4)
    const bytes = await readFile(path)
    expect(await countPages(path, 'pdf', { head: bytes, sizeBytes: bytes.length })).toBe(4)
  })

  it('countPages reads a kept head only when it is the whole file', async () => {
    const four = await write(Buffer.from(await makePdf({ pages: 4, objectStreams: false })))
    const two = Buffer.from(await makePdf({ pages: 2, objectStreams: false }))
    // The head of another, complete PDF: read, it would answer 2; not the whole file (its size says so), the file's
    // own 4 pages are counted.
    expect(await countPages(four, 'pdf', { head: two, sizeBytes: two.length + 1 })).toBe(4)
    expect(await countPages(four, 'pdf', { head: two, sizeBytes: two.length })).toBe(2)
  })
})
