import { Document, Packer, Paragraph } from 'docx'
import { writeFile } from 'node:fs/promises'
import { readZipEntry } from '../src/read-zip-entry.ts'
const doc = new Document({ sections: [{ children: [new Paragraph('Hello world'), new Paragraph('Invoice No: 42')] }] })
const buf = await Packer.toBuffer(doc)
await writeFile('/tmp/t.docx', buf)
console.log((await readZipEntry('/tmp/t.docx', 'docProps/app.xml'))?.toString())
console.log((await readZipEntry('/tmp/t.docx', '[Content_Types].xml'))?.toString().slice(0,200))
