// The page-image child process (page-renderer.ts): renders pages for the API one request at a time, so pdf.js and
// image decoding never hold the API's event loop.
import { configureFileLimits, isExtractionError, type FileLimits, type FileType } from '@quire/extraction'
import { renderPageImage } from './page-image.ts'

type Request = { id: number; path: string; type: FileType; page: number; limits: FileLimits }

process.on('message', async (msg: Request) => {
  try {
    // The parent's limits come with each request (as a parse child's do): this process has no configuration.
    configureFileLimits(msg.limits)
    const png = await renderPageImage(msg)
    process.send?.({ id: msg.id, ok: true, png })
  } catch (error) {
    const e = error as Error
    process.send?.({
      id: msg.id,
      ok: false,
      error: { message: e.message, code: isExtractionError(e) ? e.code : undefined },
    })
  }
})
process.on('disconnect', () => process.exit(0))
