import sharp from 'sharp'
import { createOcrEngine } from '/work/main/packages/extraction/src/ocr.ts'
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="300"><rect width="100%" height="100%" fill="white"/>
<text x="20" y="60" font-family="DejaVu Sans" font-size="28">Invoice No: INV-2024-0042</text>
<text x="20" y="120" font-family="DejaVu Sans" font-size="28">Date                 05/03/2024</text>
<text x="20" y="180" font-family="DejaVu Sans" font-size="28">Total Due:   $1,234.56</text></svg>`
const png = await sharp(Buffer.from(svg)).png().toBuffer()
const e = createOcrEngine()
let t = Date.now()
console.log(await e.recognize(png), Date.now()-t)
t = Date.now()
try { console.log(await e.recognize(Buffer.from('garbage'))) } catch (err) { console.log('caught', (err as Error).message) }
console.log(await e.recognize(png), Date.now()-t)
await e.close()
console.log('closed')
