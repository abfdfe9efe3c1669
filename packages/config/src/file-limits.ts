import { z } from 'zod'
import { intEnv } from './env.ts'

const positiveInt = (fallback: number) => intEnv({ min: 1, default: fallback })

/**
 * What one uploaded file may cost to read (api: intake counts pages; stage-worker: initialization and parsing). Extend
 * an app's environment schema with `FileLimitsEnv.shape` and hand `fileLimitsConfig(env)` to `configureFileLimits`
 * (@quire/extraction). Set alike in the api and the stage worker.
 */
export const FileLimitsEnv = z.object({
  /** DOCX: bytes of all entries together once inflated (media included). */
  QUIRE_MAX_UNCOMPRESSED_BYTES: positiveInt(256 * 1024 * 1024),
  /** DOCX: bytes of its XML parts together once inflated (what the text reader parses). */
  QUIRE_MAX_DOCX_XML_BYTES: positiveInt(32 * 1024 * 1024),
  /** DOCX: entries in the archive. */
  QUIRE_MAX_ZIP_ENTRIES: positiveInt(10_000),
  /** DOCX: inflated / compressed size of any one entry that inflates beyond 2 MB. */
  QUIRE_MAX_COMPRESSION_RATIO: positiveInt(200),
  /** Images: width × height of one image (or TIFF page, or image inside a PDF). */
  QUIRE_MAX_IMAGE_PIXELS: positiveInt(300_000_000),
  /** PDF and multi-page TIFF: pages of one file. */
  QUIRE_MAX_PAGES: positiveInt(5000),
})
export type FileLimitsEnv = z.infer<typeof FileLimitsEnv>

/** Same shape as @quire/extraction's FileLimits. */
export function fileLimitsConfig(env: FileLimitsEnv) {
  return {
    maxUncompressedBytes: env.QUIRE_MAX_UNCOMPRESSED_BYTES,
    maxXmlBytes: env.QUIRE_MAX_DOCX_XML_BYTES,
    maxZipEntries: env.QUIRE_MAX_ZIP_ENTRIES,
    maxCompressionRatio: env.QUIRE_MAX_COMPRESSION_RATIO,
    maxImagePixels: env.QUIRE_MAX_IMAGE_PIXELS,
    maxPages: env.QUIRE_MAX_PAGES,
  }
}
