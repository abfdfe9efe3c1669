import { access, constants } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createScheduler, createWorker, OEM, type Scheduler } from 'tesseract.js'
import { ExtractionError } from './errors.ts'
import { wordsFromTsv } from './ocr-words.ts'
import type { LayoutWord } from './page-layout.ts'

export type OcrResult = {
  text: string
  /** 0..1 (tesseract's mean word confidence / 100). */
  confidence: number
  /** The words with their boxes (page fractions) and confidences, for layout-aware extraction. */
  words?: LayoutWord[]
  /**
   * A second engine's reading of the same image (the `fused` engine): extraction reads fields from both and fuses
   * them field by field (fuse-readings.ts).
   */
  second?: Omit<OcrResult, 'second'>
}

export type OcrImage = string | Buffer | Uint8Array

export type OcrEngine = {
  /** Recognises an image file path or an encoded image (PNG, JPEG, BMP, WebP, GIF, PBM). */
  recognize(image: OcrImage): Promise<OcrResult>
  /** Starts the worker(s) now instead of on first use (they load the model: about a second of CPU each). */
  start(): Promise<void>
  /** Terminates the tesseract worker(s); the engine can be used again afterwards (lazily restarts). */
  close(): Promise<void>
  /** How many images it recognises in parallel. */
  readonly workers: number
}

export type TesseractOcrOptions = {
  /** Parallel tesseract workers (each about 100 MB RSS and one core). Default 1. */
  workers?: number
  /** Local directory holding eng.traineddata.gz. Default: @tesseract.js-data/eng's 4.0.0_best_int. */
  langPath?: string
}

/** The local English model directory; tesseract must never fetch it (it crashes offline). */
export function defaultLangPath(): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int')
}

/**
 * A tesseract.js OCR engine. The worker(s) start on first use and are reused until close().
 * Settings that matter offline: local langPath, gzip, cacheMethod 'none' (no writes into cwd),
 * and an errorHandler (without one, a failed job also throws inside tesseract's message
 * listener and takes the process down).
 */
export function createTesseractOcrEngine(options: TesseractOcrOptions = {}): OcrEngine {
  const workers = Math.max(1, Math.floor(options.workers ?? 1))
  const langPath = options.langPath ?? defaultLangPath()
  let started: Promise<Scheduler> | undefined

  const start = async (): Promise<Scheduler> => {
    // tesseract.js never settles createWorker when the model cannot be loaded (and, without an
    // errorHandler, crashes the process instead): check the file first.
    const model = join(langPath, 'eng.traineddata.gz')
    try {
      await access(model, constants.R_OK)
    } catch (error) {
      throw new ExtractionError('ocr_unavailable', `OCR model not found: ${model}`, { cause: error })
    }
    const settled = await Promise.allSettled(
      Array.from({ length: workers }, async () => {
        const worker = await createWorker('eng', OEM.LSTM_ONLY, {
          langPath,
          gzip: true,
          cacheMethod: 'none',
          errorHandler: () => {},
        })
        await worker.setParameters({ preserve_interword_spaces: '1' })
        return worker
      }),
    )
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    const created = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    if (failed) {
      await Promise.allSettled(created.map((w) => w.terminate()))
      throw new ExtractionError(
        'ocr_unavailable',
        `OCR engine could not start: ${String(failed.reason?.message ?? failed.reason)}`,
        {
          cause: failed.reason,
        },
      )
    }
    const scheduler = createScheduler()
    for (const worker of created) scheduler.addWorker(worker)
    return scheduler
  }

  const scheduler = (): Promise<Scheduler> => {
    if (!started) {
      started = start()
      started.catch(() => {
        started = undefined
      })
    }
    return started
  }

  return {
    workers,
    async start() {
      await scheduler()
    },
    async recognize(image: OcrImage): Promise<OcrResult> {
      const ready = await scheduler()
      const input = typeof image === 'string' || Buffer.isBuffer(image) ? image : Buffer.from(image)
      try {
        // TSV carries each word's box; it costs little beside the recognition itself.
        const { data } = await ready.addJob('recognize', input, {}, { text: true, tsv: true })
        const confidence = Number.isFinite(data.confidence) ? data.confidence / 100 : 0
        return {
          text: (data.text ?? '').replace(/[ \t]+$/gm, '').trim(),
          words: wordsFromTsv(data.tsv),
          confidence: Math.min(1, Math.max(0, confidence)),
        }
      } catch (error) {
        throw new ExtractionError('ocr_failed', `OCR failed: ${String((error as Error)?.message ?? error)}`, {
          cause: error,
        })
      }
    },
    async close(): Promise<void> {
      const pending = started
      started = undefined
      if (!pending) return
      const scheduler = await pending.catch(() => undefined)
      await scheduler?.terminate()
    },
  }
}
