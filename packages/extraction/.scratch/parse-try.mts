import { writeFile } from 'node:fs/promises'
import sharp from 'sharp'
import * as f from '../test/fixtures.ts'
import { parseDocument } from '../src/parse-document.ts'
import { countPages } from '../src/count-pages.ts'
import { sniffFileType } from '../src/sniff-file-type.ts'
import { createOcrEngine } from '../src/ocr.ts'
const dir = '/tmp/ptry'
await import('node:fs/promises').then(m => m.mkdir(dir, { recursive: true }))
await writeFile(`${dir}/a.pdf`, await f.makeTextPdf([['Hello page one', 'Invoice No: 42'], ['Second page', 'Total Due: 99.50 EUR']]))
await writeFile(`${dir}/two.pdf`, await f.makeTwoColumnPdf([['Invoice Number', 'INV-7'], ['Total', '120.00']]))
const png = await f.renderTextPng(['ACME Widgets Ltd', 'Invoice No: INV-2024-0042', 'Total Due: $1,234.56'], { width: 900 })
await writeFile(`${dir}/p.png`, png)
await writeFile(`${dir}/scan.pdf`, await f.makeImagePdf([png]))
await writeFile(`${dir}/m.tiff`, await f.makeMultiPageTiff([png, png]))
await writeFile(`${dir}/b.bmp`, await f.makeBmp(png))
await writeFile(`${dir}/x.docx`, await f.makeDocx(['Hello', 'World']))
await writeFile(`${dir}/y.docx`, f.makeDocxWithStoredPages(['Hello', 'World'], 7))
await writeFile(`${dir}/g.gif`, await sharp(png).gif().toBuffer())
await writeFile(`${dir}/w.webp`, await sharp(png).webp().toBuffer())
await writeFile(`${dir}/j.jpg`, await sharp(png).jpeg().toBuffer())
const ocr = createOcrEngine()
for (const n of ['a.pdf','two.pdf','scan.pdf','p.png','m.tiff','b.bmp','x.docx','y.docx','g.gif','w.webp','j.jpg']) {
  const p = `${dir}/${n}`
  const s = await sniffFileType(p)
  const t = Date.now()
  const c = await countPages(p, s!.type)
  const r = await parseDocument(p, s!.type, { ocr, rasteriser: process.argv[2] as any })
  console.log(n, s, c, JSON.stringify(r), Date.now() - t, 'ms')
}
await ocr.close()
