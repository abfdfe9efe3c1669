import { checkPageLimit, parseDocument, parsePdfTextLayer, type FileType, type ParsedDocument } from '@quire/extraction'
import { creditsForPages } from '@quire/domain'
import { rootDocuments, type StageDeps, type StageExecutor, type StageOutput } from './stage-context.ts'
import { blobStorageUnavailable, documentFailure } from './stage-failures.ts'

/** More pages than this make a parse worth committing around (a one-page text PDF parses in milliseconds). */
const COSTLY_PAGES = 2

/** Default for StageDeps.parseInlineMaxBytes (QUIRE_PARSE_INLINE_MAX_BYTES). */
export const DEFAULT_PARSE_INLINE_MAX_BYTES = 256 * 1024

/**
 * Whether a file's text layer is read in the stage worker itself although it has parse processes: a PDF of at most
 * COSTLY_PAGES pages and `maxBytes` bytes (a bound on what pdf.js may hold this thread for, fonts and inflated
 * streams included).
 */
export function parsesInline(file: { fileType: string; pageCount: number; sizeBytes: number }, maxBytes?: number) {
  const limit = maxBytes ?? DEFAULT_PARSE_INLINE_MAX_BYTES
  return file.fileType === 'pdf' && file.pageCount <= COSTLY_PAGES && file.sizeBytes <= limit
}

/**
 * Text layers read by initialization (which has to open the file anyway to see it is readable) for the parse stage
 * that follows in this process: by blob key, taken once. A parse that runs elsewhere, or after a restart, reads the
 * file itself; at most LAYERS_KEPT are kept (a chain that stopped between the two stages leaves its entry behind).
 */
const earlyTextLayers = new Map<string, ParsedDocument>()
const LAYERS_KEPT = 64

/**
 * For initialization: opens a small PDF the parse stage will read in-process by reading its text layer (kept for
 * that stage). True when that read shows the file readable, with pages; false leaves the verdict to verifyReadable.
 */
export async function readTextLayerEarly(
  deps: Pick<StageDeps, 'parsePool' | 'parseInlineMaxBytes'>,
  file: { blobKey: string; fileType: string; pageCount: number; sizeBytes: number },
  path: string,
): Promise<boolean> {
  if (!deps.parsePool || !parsesInline(file, deps.parseInlineMaxBytes)) return false
  const layer = await parsePdfTextLayer(path).catch(() => null)
  if (!layer || layer.pages.length === 0) return false
  checkPageLimit('pdf', layer.pages.length)
  if (earlyTextLayers.size >= LAYERS_KEPT) earlyTextLayers.delete(earlyTextLayers.keys().next().value as string)
  earlyTextLayers.set(file.blobKey, layer)
  return true
}

/** Text per page for every file: embedded text where a PDF has it, OCR for scans and images. */
export const parseStage: StageExecutor = {
  stage: 'parse',
  documentsFor: rootDocuments,
  // Images always go through OCR, and every page costs: worth a checkpoint on either side.
  costly: (job) => job.pageCount > COSTLY_PAGES || job.files.some((f) => f.fileType !== 'pdf' && f.fileType !== 'docx'),
  async run({ deps, job, definition }) {
    const parsed: (Pick<ParsedDocument, 'pages' | 'ocrPages' | 'layouts' | 'second'> & { id: string })[] = []
    const failedDocuments: NonNullable<StageOutput['failedDocuments']> = []
    let pagesParsed = 0
    let cpuMs = 0
    // OCR reads with the models of the languages the pipeline names; without any, in the language of the text.
    const languages = definition.languages?.length ? { languages: definition.languages } : {}
    for (const doc of rootDocuments(job)) {
      const file = job.files.find((f) => f.position === doc.filePosition)
      if (!file) continue
      let path: string
      try {
        path = await deps.blobs.localPath(file.blobKey)
      } catch (err) {
        throw blobStorageUnavailable(err)
      }
      try {
        // In the parse processes when the worker has them (CPU-heavy work off the event loop), else in-process.
        let result: ParsedDocument
        if (deps.parsePool) {
          // A small text PDF's text layer is read here: a few milliseconds on this thread, against a round trip to a
          // parse process that costs more than the parse. Anything else, a page that needs OCR, or a file this read
          // fails on goes to the parse processes as before (so their verdict, not this one, fails a document).
          const early = earlyTextLayers.get(file.blobKey)
          earlyTextLayers.delete(file.blobKey)
          const inline = parsesInline(file, deps.parseInlineMaxBytes)
            ? (early ?? (await parsePdfTextLayer(path).catch(() => null)))
            : null
          if (inline) result = inline
          else {
            const outcome = await deps.parsePool.parse(path, file.fileType as FileType, languages)
            cpuMs += outcome.cpuMs
            result = outcome
          }
        } else {
          result = await parseDocument(path, file.fileType as FileType, { ocr: deps.ocr, ...languages })
        }
        const { pages, ocrPages, layouts, second } = result
        parsed.push({ id: doc.id, pages, ocrPages, layouts, ...(second ? { second } : {}) })
        pagesParsed += file.pageCount
      } catch (err) {
        // A failed parse used CPU too (machine_seconds is what the stages really used); the pool attaches it.
        const failedCpuMs = (err as { cpuMs?: unknown } | null)?.cpuMs
        if (typeof failedCpuMs === 'number') cpuMs += failedCpuMs
        const failure = documentFailure(err, `file "${file.fileName}"`, { otherwise: 'parse_failed' })
        failedDocuments.push({ documentId: doc.id, ...failure })
      }
    }
    return {
      credits: creditsForPages(pagesParsed, definition.credits.per_page),
      cpuMs,
      failedDocuments,
      // `layout`: each page's words with positions, so extraction can say where it read a value; `second`: a second
      // OCR engine's reading of the same pages (the fused engine), which extraction fuses with the first.
      documents: parsed.map((p) => ({
        update: p.id,
        set: {
          content: {
            pages: p.pages,
            ocr_pages: p.ocrPages,
            layout: p.layouts,
            ...(p.second ? { second: { pages: p.second.pages, layout: p.second.layouts } } : {}),
          },
        },
      })),
    }
  },
}
