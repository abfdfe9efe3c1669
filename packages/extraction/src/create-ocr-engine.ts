import { createCombinedOcrEngine } from './combined-ocr.ts'
import { isExtractionError } from './errors.ts'
import { detectLanguage } from './detect-language.ts'
import { createTesseractOcrEngine, type OcrEngine, type TesseractOcrOptions } from './ocr.ts'
import { createPaddleOcrEngine, type PaddleOcrOptions } from './paddle-ocr.ts'
import { prepareScan } from './prepare-scan.ts'

/** The OCR engines Quire can run (README, "OCR engines"; compared on real scans by eval/compare-ocr.ts). */
export const OCR_ENGINES = ['tesseract', 'tesseract-prep', 'paddle', 'combined', 'fused'] as const
export type OcrEngineName = (typeof OCR_ENGINES)[number]
/**
 * What a parse uses when its configuration names no engine: tesseract and Paddle both read the page and extraction
 * fuses their fields. On the real receipts it got 91.5% of dates and 91.4% of totals right, against 84.0% / 81.7%
 * for tesseract alone and 77.7% / 88.2% for Paddle alone (README, "OCR engines"), at the CPU of both.
 */
export const DEFAULT_OCR_ENGINE: OcrEngineName = 'fused'

export type OcrEngineOptions = TesseractOcrOptions & {
  /**
   * `tesseract`: tesseract.js on the page as it is (fastest); `tesseract-prep`: the page greyscaled, upscaled,
   * straightened and binarised first; `paddle`: PaddleOCR PP-OCRv4 on ONNX Runtime (most accurate of one reading);
   * `combined`: tesseract, and Paddle again on the lines with figures tesseract doubts; `fused`: tesseract and Paddle
   * each read the whole page, and extraction fuses the fields of the two readings (most accurate, the CPU of both).
   * Default DEFAULT_OCR_ENGINE.
   */
  engine?: OcrEngineName
  /** Options of the Paddle engine (`paddle`, `combined`); its threads default to `workers`. */
  paddle?: PaddleOcrOptions
}

/** An OCR engine by name; every one starts lazily (or on start()) and runs offline. */
export function createOcrEngine(options: OcrEngineOptions = {}): OcrEngine {
  const { engine = DEFAULT_OCR_ENGINE, paddle, ...tesseract } = options
  const paddleOptions = { workers: tesseract.workers, ...paddle }
  const tesseractEngine = () => readInDocumentLanguage(createTesseractOcrEngine(tesseract))
  switch (engine) {
    case 'tesseract':
      return tesseractEngine()
    case 'tesseract-prep':
      return withPreparation(tesseractEngine())
    case 'paddle':
      return withBmpFallback(createPaddleOcrEngine(paddleOptions), tesseractEngine)
    case 'combined':
      return createCombinedOcrEngine(tesseractEngine(), createPaddleOcrEngine(paddleOptions))
    case 'fused':
      return withSecondReading(tesseractEngine(), createPaddleOcrEngine(paddleOptions))
  }
}

/**
 * `engine` (tesseract, a model per language) reading a page in the language it is written in: the languages the
 * caller names, else English first and, when that reading's words are plainly in another language, that language's
 * model again (its letters: umlauts, accents, ß). A page in English, or too short to tell, costs one reading.
 */
export function readInDocumentLanguage(engine: OcrEngine): OcrEngine {
  return {
    workers: engine.workers,
    start: () => engine.start(),
    close: () => engine.close(),
    async recognize(image, options) {
      if (options?.languages?.length) return engine.recognize(image, options)
      const english = await engine.recognize(image)
      const language = detectLanguage(english.text)
      if (!language || language === 'en') return english
      return engine.recognize(image, { languages: [language] })
    },
  }
}

/**
 * Two independent readings of every page: `first`'s is the page's text and words, `second`'s rides along for
 * extraction to fuse with it. An image the second engine cannot decode (a BMP path, for Paddle) has one reading.
 */
function withSecondReading(first: OcrEngine, second: OcrEngine): OcrEngine {
  return {
    workers: first.workers,
    async start() {
      await Promise.all([first.start(), second.start()])
    },
    async close() {
      await Promise.all([first.close(), second.close()])
    },
    async recognize(image, options) {
      const primary = await first.recognize(image, options)
      try {
        const { text, confidence, words } = await second.recognize(image)
        return { ...primary, second: { text, confidence, words } }
      } catch (error) {
        if (isExtractionError(error) && error.code === 'corrupt_file') return primary
        throw error
      }
    },
  }
}

/** `engine` reading each image after prepareScan (boxes stay page fractions; a straightened page shifts them little). */
function withPreparation(engine: OcrEngine): OcrEngine {
  return {
    workers: engine.workers,
    start: () => engine.start(),
    close: () => engine.close(),
    recognize: async (image, options) => engine.recognize(await prepareScan(image), options),
  }
}

/**
 * `engine` (Paddle, which reads images through sharp), with tesseract for what sharp cannot decode: a BMP reaches
 * the engine as its file path (image-pages.ts). The tesseract engine starts only when such a file comes.
 */
function withBmpFallback(engine: OcrEngine, fallback: () => OcrEngine): OcrEngine {
  let second: OcrEngine | undefined
  return {
    workers: engine.workers,
    start: () => engine.start(),
    close: async () => {
      await Promise.all([engine.close(), second?.close()])
    },
    recognize: async (image, options) => {
      try {
        return await engine.recognize(image, options)
      } catch (error) {
        if (typeof image !== 'string' || !isExtractionError(error) || error.code !== 'corrupt_file') throw error
        second ??= fallback()
        return await second.recognize(image, options)
      }
    },
  }
}
