import { describe, expect, it } from 'vitest'
import { FileLimitsEnv, fileLimitsConfig } from './file-limits.ts'

describe('QUIRE_MAX_* file limits', () => {
  it('defaults', () => {
    expect(fileLimitsConfig(FileLimitsEnv.parse({}))).toEqual({
      maxUncompressedBytes: 256 * 1024 * 1024,
      maxXmlBytes: 32 * 1024 * 1024,
      maxZipEntries: 10_000,
      maxCompressionRatio: 200,
      maxImagePixels: 300_000_000,
      maxPages: 5000,
    })
  })

  it('reads each variable; refuses zero, negatives and non-numbers', () => {
    const env = FileLimitsEnv.parse({ QUIRE_MAX_PAGES: '2000', QUIRE_MAX_IMAGE_PIXELS: '100000000' })
    expect(fileLimitsConfig(env)).toMatchObject({ maxPages: 2000, maxImagePixels: 100_000_000 })
    for (const bad of ['0', '-1', 'many', '1.5']) {
      expect(() => FileLimitsEnv.parse({ QUIRE_MAX_ZIP_ENTRIES: bad }), bad).toThrow()
    }
  })
})
