// Run by parse-pool.test.ts as a process of its own (the parse pool forks TypeScript children, which need this
// process's tsx loader): warms a pool of two processes, first without and then with OCR, parses a text PDF with it,
// and prints what it saw as one JSON line. Arguments: the OCR engine (default tesseract), the processes (default 2).
import { createParsePool, OCR_ENGINES } from '../src/index.ts'
import { makeTempDir, makeTextPdf, writeFixture } from './fixtures.ts'

const tmp = await makeTempDir()
const ocrEngine = OCR_ENGINES.find((e) => e === process.argv[2]) ?? 'tesseract'
const pool = createParsePool({ processes: Number(process.argv[3] ?? 2), ocrWorkers: 1, ocrEngine })
try {
  const processes = await pool.warm('processes')
  const ocr = await pool.warm('ocr')
  const path = await writeFixture(tmp.file('text.pdf'), await makeTextPdf([['Invoice No: WARM-1']]))
  const parsed = await pool.parse(path, 'pdf')
  console.log(JSON.stringify({ processes, ocr, text: parsed.pages[0] }))
} finally {
  await pool.close()
  await tmp.cleanup()
}
