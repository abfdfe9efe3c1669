import { execFile } from 'node:child_process'
import { access, constants, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { renderPageAsImage } from 'unpdf'
import { importCanvas, type PdfDocument } from './pdf-document.ts'

const execFileAsync = promisify(execFile)

/** `pdftoppm` (poppler-utils) when installed, else pdf.js + @napi-rs/canvas. */
export type Rasteriser = 'pdftoppm' | 'pdfjs'
export type RasteriserChoice = Rasteriser | 'auto'

export const DEFAULT_OCR_DPI = 300
/** Longest side of a rendered page in pixels; bigger pages get a lower DPI. */
export const MAX_RENDER_PIXELS = 4200

let pdftoppmPath: Promise<string | null> | undefined

/** Finds pdftoppm on PATH once per process (no process is spawned for the check). */
export function findPdftoppm(): Promise<string | null> {
  pdftoppmPath ??= (async () => {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (!dir) continue
      const candidate = join(dir, 'pdftoppm')
      try {
        await access(candidate, constants.X_OK)
        return candidate
      } catch {
        // not here
      }
    }
    return null
  })()
  return pdftoppmPath
}

export async function resolveRasteriser(choice: RasteriserChoice = 'auto'): Promise<Rasteriser> {
  if (choice !== 'auto') return choice
  return (await findPdftoppm()) ? 'pdftoppm' : 'pdfjs'
}

/**
 * Renders one page (1-based) as a greyscale PNG for OCR, at `dpi` (default 300) capped so the
 * longest side stays within MAX_RENDER_PIXELS.
 */
export async function rasterisePdfPage(options: {
  path: string
  doc: PdfDocument
  pageNumber: number
  rasteriser: Rasteriser
  dpi?: number
  /** Keep the page's colours (a page image for a person, not OCR). Default false: greyscale. */
  colour?: boolean
}): Promise<Buffer> {
  const { path, doc, pageNumber, rasteriser } = options
  const colour = options.colour ?? false
  const page = await doc.getPage(pageNumber)
  const viewport = page.getViewport({ scale: 1 })
  const longestPt = Math.max(viewport.width, viewport.height, 1)
  const dpi = Math.max(36, Math.min(options.dpi ?? DEFAULT_OCR_DPI, Math.floor((MAX_RENDER_PIXELS * 72) / longestPt)))

  if (rasteriser === 'pdftoppm') {
    const binary = (await findPdftoppm()) ?? 'pdftoppm'
    const dir = await mkdtemp(join(tmpdir(), 'quire-raster-'))
    try {
      const prefix = join(dir, 'page')
      const n = String(pageNumber)
      const tone = colour ? [] : ['-gray']
      await execFileAsync(binary, ['-f', n, '-l', n, '-r', String(dpi), ...tone, '-png', '-singlefile', path, prefix], {
        timeout: 120_000,
      })
      return await readFile(`${prefix}.png`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  const png = await renderPageAsImage(doc, pageNumber, { canvasImport: importCanvas, scale: dpi / 72 })
  // Quire's own rendering, at most MAX_RENDER_PIXELS on its longest side: held to that bound.
  const image = sharp(Buffer.from(png), { limitInputPixels: MAX_RENDER_PIXELS * MAX_RENDER_PIXELS }).flatten({
    background: '#ffffff',
  })
  return (colour ? image : image.greyscale()).withDensity(dpi).png().toBuffer()
}
