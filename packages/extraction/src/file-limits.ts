/**
 * What one file may cost Quire to read, enforced while it is read (DESIGN, "Robustness and operations"): a DOCX is
 * inflated entry by entry with a running byte count, an image is refused by its header before a pixel is decoded, a
 * PDF or TIFF by its page count. The defaults leave real documents far inside (a 300-page text DOCX inflates to a few
 * MB of XML; an A4 page scanned at 600 dpi is 35 megapixels).
 *
 * Each process sets them once from its configuration (`configureFileLimits`, from the app's config.ts; a parse child
 * receives its parent's with every request); until then the defaults apply.
 */
export type FileLimits = {
  /** Bytes of all entries of a DOCX together, inflated (media included). */
  maxUncompressedBytes: number
  /** Bytes of the XML parts of a DOCX together, inflated: what the text reader parses into memory. */
  maxXmlBytes: number
  /** Entries in a DOCX archive. */
  maxZipEntries: number
  /**
   * Inflated / compressed size of any DOCX entry larger than RATIO_FLOOR_BYTES inflated. Word's XML compresses 5–20×.
   */
  maxCompressionRatio: number
  /** Width × height of an image (per page/frame); larger fails as too large before it is decoded. */
  maxImagePixels: number
  /** Pages of a PDF or multi-page TIFF; more is refused at intake (and fails at initialization as a backstop). */
  maxPages: number
}

export const DEFAULT_FILE_LIMITS: Readonly<FileLimits> = Object.freeze({
  maxUncompressedBytes: 256 * 1024 * 1024,
  maxXmlBytes: 32 * 1024 * 1024,
  maxZipEntries: 10_000,
  maxCompressionRatio: 200,
  maxImagePixels: 300_000_000,
  maxPages: 5000,
})

/** The ratio limit applies to entries that inflate beyond this; small parts may compress very well. */
export const RATIO_FLOOR_BYTES = 2 * 1024 * 1024

let current: Readonly<FileLimits> = DEFAULT_FILE_LIMITS

/** Sets this process's limits (unset fields keep their defaults). Returns the limits now in force. */
export function configureFileLimits(limits: Partial<FileLimits> = {}): Readonly<FileLimits> {
  const next = { ...DEFAULT_FILE_LIMITS }
  for (const key of Object.keys(DEFAULT_FILE_LIMITS) as (keyof FileLimits)[]) {
    const value = limits[key]
    if (value === undefined) continue
    if (!Number.isFinite(value) || value <= 0) throw new Error(`file limit ${key} must be a positive number`)
    next[key] = value
  }
  current = Object.freeze(next)
  return current
}

/** The limits in force in this process. */
export function fileLimits(): Readonly<FileLimits> {
  return current
}

/** `300 megapixels`, `256 MB`: limits as a message names them. */
export const megapixels = (pixels: number) => `${Math.round(pixels / 1_000_000)} megapixels`
export const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`
