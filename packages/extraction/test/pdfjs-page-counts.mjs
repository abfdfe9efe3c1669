// pdf.js's page count for each PDF named on the command line, as JSON (null where pdf.js cannot open it). A child
// process of the fuzz test: pdf.js leaves unhandled rejections behind on damaged files, which would fail the run.
import { readFile } from 'node:fs/promises'
import { getDocumentProxy } from 'unpdf'

process.on('unhandledRejection', () => {})
const counts = []
for (const path of process.argv.slice(2)) {
  try {
    const doc = await getDocumentProxy(new Uint8Array(await readFile(path)), { verbosity: 0 })
    counts.push(doc.numPages)
    await doc.destroy()
  } catch {
    counts.push(null)
  }
}
process.stdout.write(JSON.stringify(counts))
