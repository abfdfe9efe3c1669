import { access, constants, mkdtemp, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createScheduler, createWorker, OEM, type Scheduler } from 'tesseract.js'
import { type DocumentLanguage, ISO_639_3 } from './detect-language.ts'
import { ExtractionError } from './errors.ts'
import { wordsFromTsv } from './ocr-words.ts'
import type { LayoutWord } from './page-layout.ts'

export type OcrResult = {
  text: string
  /** 0..1 (tesseract's mean word confidence / 100). */
  confidence: number
  /** The language whose model read the text, where the engine has one per language. */
  language?: DocumentLanguage
  /** The words with their boxes (page fractions) and confidences, for layout-aware extraction. */
  words?: LayoutWord[]
  /**
   * A second engine's reading of the same image (the `fused` engine): extraction reads fields from both and fuses
   * them field by field (fuse-readings.ts).
   */
  second?: Omit<OcrResult, 'second'>
}

export type OcrImage = string | Buffer | Uint8Array

export type RecognizeOptions = {
  /**
   * The languages the page is written in (a pipeline's `languages`): an engine with a model per language reads with
   * theirs. Absent: English, or the language the text turns out to be in (readInDocumentLanguage).
   */
  languages?: readonly DocumentLanguage[]
}

export type OcrEngine = {
  /** Recognises an image file path or an encoded image (PNG, JPEG, BMP, WebP, GIF, PBM). */
  recognize(image: OcrImage, options?: RecognizeOptions): Promise<OcrResult>
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
  /**
   * A local directory holding `<code>.traineddata.gz` for every language read (eng, deu, fra, nld, spa, ita).
   * Default: each language's own package, @tesseract.js-data/<code>, in its 4.0.0_best_int flavour.
   */
  langPath?: string
}

/** Schedulers (each with `workers` tesseract workers) kept for this many language sets at once; older ones close. */
const LANGUAGE_SETS_KEPT = 2

/** The local model directory of one language; tesseract must never fetch a model (it crashes offline). */
export function defaultLangPath(code = 'eng'): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve(`@tesseract.js-data/${code}/package.json`)), '4.0.0_best_int')
}

/**
 * The directory tesseract loads a language set's models from: `langPath` when given, else the one language's own
 * package folder, else (several languages, each in its own package) a temporary folder of links to them. Every model
 * is checked first: tesseract.js never settles createWorker when one cannot be loaded.
 */
async function modelDirectory(codes: readonly string[], langPath: string | undefined): Promise<string> {
  const file = (code: string) => join(langPath ?? defaultLangPath(code), `${code}.traineddata.gz`)
  for (const code of codes) {
    try {
      await access(file(code), constants.R_OK)
    } catch (error) {
      throw new ExtractionError('ocr_unavailable', `OCR model not found: ${file(code)}`, { cause: error })
    }
  }
  if (langPath) return langPath
  if (codes.length === 1) return defaultLangPath(codes[0] as string)
  const dir = await mkdtemp(join(tmpdir(), 'quire-ocr-models-'))
  await Promise.all(codes.map((code) => symlink(file(code), join(dir, `${code}.traineddata.gz`))))
  return dir
}

/**
 * A tesseract.js OCR engine. The worker(s) start on first use and are reused until close().
 * Settings that matter offline: local langPath, gzip, cacheMethod 'none' (no writes into cwd),
 * and an errorHandler (without one, a failed job also throws inside tesseract's message
 * listener and takes the process down).
 */
export function createTesseractOcrEngine(options: TesseractOcrOptions = {}): OcrEngine {
  const workers = Math.max(1, Math.floor(options.workers ?? 1))
  const langPath = options.langPath
  /** Started schedulers by language set ("eng", "deu", "deu+fra"), most recently used last. */
  const started = new Map<string, { scheduler: Promise<Scheduler>; busy: number }>()

  const start = async (codes: readonly string[]): Promise<Scheduler> => {
    const dir = await modelDirectory(codes, langPath)
    const settled = await Promise.allSettled(
      Array.from({ length: workers }, async () => {
        const worker = await createWorker(codes.join('+'), OEM.LSTM_ONLY, {
          langPath: dir,
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

  /** The scheduler of a language set, started on first use; the least recently used idle set closes past the cap. */
  const acquire = (codes: readonly string[]) => {
    const key = codes.join('+')
    let entry = started.get(key)
    if (entry) started.delete(key)
    else {
      const scheduler = start(codes)
      entry = { scheduler, busy: 0 }
      scheduler.catch(() => {
        if (started.get(key)?.scheduler === scheduler) started.delete(key)
      })
    }
    started.set(key, entry)
    entry.busy++
    for (const [other, kept] of started) {
      if (started.size <= LANGUAGE_SETS_KEPT) break
      if (other === key || kept.busy > 0) continue
      started.delete(other)
      void kept.scheduler.then((s) => s.terminate()).catch(() => {})
    }
    return entry
  }

  return {
    workers,
    async start() {
      const entry = acquire([ISO_639_3.en])
      try {
        await entry.scheduler
      } finally {
        entry.busy--
      }
    },
    async recognize(image: OcrImage, options: RecognizeOptions = {}): Promise<OcrResult> {
      const languages = options.languages?.length ? [...new Set(options.languages)] : (['en'] as const)
      const entry = acquire(languages.map((l) => ISO_639_3[l]))
      try {
        const ready = await entry.scheduler
        const input = typeof image === 'string' || Buffer.isBuffer(image) ? image : Buffer.from(image)
        // TSV carries each word's box; it costs little beside the recognition itself.
        const { data } = await ready.addJob('recognize', input, {}, { text: true, tsv: true }).catch((error) => {
          throw new ExtractionError('ocr_failed', `OCR failed: ${String((error as Error)?.message ?? error)}`, {
            cause: error,
          })
        })
        const confidence = Number.isFinite(data.confidence) ? data.confidence / 100 : 0
        return {
          text: (data.text ?? '').replace(/[ \t]+$/gm, '').trim(),
          words: wordsFromTsv(data.tsv),
          confidence: Math.min(1, Math.max(0, confidence)),
          ...(languages.length === 1 ? { language: languages[0] } : {}),
        }
      } finally {
        entry.busy--
      }
    },
    async close(): Promise<void> {
      const entries = [...started.values()]
      started.clear()
      await Promise.all(entries.map((e) => e.scheduler.then((s) => s.terminate()).catch(() => {})))
    },
  }
}
