import './pdf-polyfill.ts'
import { open, readFile } from 'node:fs/promises'
import { createIsomorphicCanvasFactory, getDocumentProxy, getResolvedPDFJS } from 'unpdf'
import { ExtractionError } from './errors.ts'
import { fileLimits } from './file-limits.ts'

export type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>

const importCanvas = () => import('@napi-rs/canvas')

/**
 * Opens a PDF with pdf.js. The file is read once; pdf.js takes the bytes over.
 * `withCanvas` also wires @napi-rs/canvas so pages can be rendered.
 */
export async function openPdf(path: string, options: { withCanvas?: boolean } = {}): Promise<PdfDocument> {
  const data = new Uint8Array(await readFile(path))
  // An image inside the PDF is held to the same pixel limit as an uploaded one: pdf.js skips larger ones when it
  // renders a page instead of allocating them.
  const extra: Record<string, unknown> = { verbosity: 0, maxImageSize: fileLimits().maxImagePixels }
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

/** Bytes pdf.js is handed per request when it reads a PDF by ranges. */
const RANGE_CHUNK = 64 * 1024
/** A PDF whose structure is not read by then is treated as unreadable (a range read never answered, a bad file). */
const RANGE_TIMEOUT_MS = 30_000

/**
 * Opens a PDF reading only the byte ranges pdf.js asks for (trailer, cross-reference table, page tree), never the
 * whole file: counting the pages of a 100 MB upload then costs the API kilobytes, not the file's size twice over.
 * For metadata questions (page count, encryption); rendering and text use openPdf.
 */
export async function openPdfByRanges(path: string): Promise<PdfDocument & { closeFile(): Promise<void> }> {
  const { getDocument, PDFDataRangeTransport } = await getResolvedPDFJS()
  const handle = await open(path, 'r')
  let task: ReturnType<typeof getDocument> | undefined
  let timer: NodeJS.Timeout | undefined
  try {
    const { size } = await handle.stat()
    const read = async (begin: number, end: number) => {
      const chunk = new Uint8Array(Math.max(0, Math.min(end, size) - begin))
      await handle.read(chunk, 0, chunk.length, begin)
      return chunk
    }
    const transport = new PDFDataRangeTransport(size, await read(0, Math.min(size, RANGE_CHUNK)))
    let failed: ((err: unknown) => void) | undefined
    const failure = new Promise<never>((_, reject) => {
      failed = reject
      timer = setTimeout(() => reject(new Error(`not read within ${RANGE_TIMEOUT_MS / 1000} s`)), RANGE_TIMEOUT_MS)
    })
    transport.requestDataRange = (begin: number, end: number) => {
      read(begin, end)
        .then((chunk) => transport.onDataRange(begin, chunk))
        .catch((err: unknown) => failed?.(err))
    }
    task = getDocument({
      range: transport,
      verbosity: 0,
      isEvalSupported: false,
      disableAutoFetch: true,
      disableStream: true,
      rangeChunkSize: RANGE_CHUNK,
    })
    const doc = (await Promise.race([task.promise, failure])) as PdfDocument
    return Object.assign(doc, { closeFile: () => handle.close() })
  } catch (error) {
    await task?.destroy().catch(() => {})
    await handle.close()
    const name = (error as { name?: string }).name
    if (name === 'PasswordException') {
      throw new ExtractionError('encrypted', 'PDF is password-protected', { cause: error })
    }
    throw new ExtractionError('corrupt_file', `PDF could not be read: ${(error as Error).message}`, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}

export { importCanvas }
