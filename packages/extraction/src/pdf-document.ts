import './pdf-polyfill.ts'
import { readFile } from 'node:fs/promises'
import { createIsomorphicCanvasFactory, getDocumentProxy } from 'unpdf'
import { ExtractionError } from './errors.ts'

export type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>

const importCanvas = () => import('@napi-rs/canvas')

/**
 * Opens a PDF with pdf.js. The file is read once; pdf.js takes the bytes over.
 * `withCanvas` also wires @napi-rs/canvas so pages can be rendered.
 */
export async function openPdf(path: string, options: { withCanvas?: boolean } = {}): Promise<PdfDocument> {
  const data = new Uint8Array(await readFile(path))
  const extra: Record<string, unknown> = { verbosity: 0 }
  if (options.withCanvas) {
    extra.CanvasFactory = await createIsomorphicCanvasFactory(importCanvas).catch(() => undefined)
  }
  try {
    return await getDocumentProxy(data, extra)
  } catch (error) {
    const name = (error as { name?: string }).name
    if (name === 'PasswordException') {
      throw new ExtractionError('encrypted', 'PDF is password-protected', { cause: error })
    }
    throw new ExtractionError('corrupt_file', `PDF could not be read: ${(error as Error).message}`, { cause: error })
  }
}

export { importCanvas }
