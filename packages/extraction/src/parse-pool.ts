import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ExtractionError, type ExtractionErrorCode } from './errors.ts'
import type { FileType } from './file-types.ts'
import { DEFAULT_OCR_ENGINE, type OcrEngineName } from './create-ocr-engine.ts'
import type { ParsedDocument, ParseOptions } from './parse-document.ts'
import { fileLimits } from './file-limits.ts'

export type ParsePoolOptions = {
  /** Child processes parsing at once (each runs its own OCR engine). Default 1. */
  processes?: number
  /** Tesseract workers (Paddle: threads) inside each child. Default 1. */
  ocrWorkers?: number
  /** The OCR engine each child runs (create-ocr-engine.ts). Default DEFAULT_OCR_ENGINE. */
  ocrEngine?: OcrEngineName
  /** A child whose resident memory passed this after a request is replaced. Default 1.5 GiB. */
  maxRssBytes?: number
  /** V8 heap limit of each child (MB). Default 1024. */
  maxOldSpaceMb?: number
}

export type ParseOutcome = ParsedDocument & {
  /**
   * CPU time (user + system) spent on this document: the child's, OCR threads included, and that of the processes it
   * ran for it (pdftoppm). A rejected parse carries the same figure as `cpuMs` on its error.
   */
  cpuMs: number
  /** The child's resident memory after the request. */
  rssBytes: number
}

export type ParsePool = {
  /** `languages`: what the document is written in, where the pipeline says (ParseOptions.languages). */
  parse(path: string, type: FileType, options?: Pick<ParseOptions, 'languages'>): Promise<ParseOutcome>
  /**
   * Starts every child now instead of on first use (`processes`: the child with its modules loaded; `ocr`: its OCR
   * engine too, with the model loaded, and a first scanned page read: warm-up-scan.ts), so the first documents are no
   * slower than the rest. Resolves when all are ready, with each child's resident memory then (and, for `ocr`, what
   * it read on that page); rejects (the children stay, and load the rest on first use) when the OCR engine cannot
   * start or read the page.
   */
  warm(what: 'processes' | 'ocr'): Promise<{ rssBytes: number; ocrText?: string }[]>
  close(): Promise<void>
}

type Pending = {
  resolve: (v: ParseOutcome | { rssBytes: number; ocrText?: string }) => void
  reject: (e: Error) => void
}
type Slot = { child: ChildProcess | null; busy: boolean; pending: Map<number, Pending> }

type Reply =
  | { id: number; ok: boolean; warmed: true; error: string | null; ocrText?: string; rss: number }
  | { id: number; ok: true; result: ParsedDocument; cpuMs: number; rss: number }
  | {
      id: number
      ok: false
      error: { name: string; message: string; code?: ExtractionErrorCode }
      cpuMs: number
      rss: number
    }

const CHILD_ENTRY = fileURLToPath(
  new URL(`./parse-child${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
)

/**
 * Parses documents in child processes, so that PDF parsing, page rasterising and OCR (CPU-bound, and pdf.js runs on
 * the calling thread) never stall the stage worker's event loop: BullMQ lock renewal, the outbox relay and the
 * sweepers keep their timing. Each child handles one document at a time; its memory is bounded by a V8 heap limit
 * and the child is replaced when its resident memory grew past `maxRssBytes`, or when it dies (the request fails
 * with an ordinary error and the queue retries it).
 */
export function createParsePool(opts: ParsePoolOptions = {}): ParsePool {
  const size = Math.max(1, Math.floor(opts.processes ?? 1))
  const maxRss = opts.maxRssBytes ?? 1.5 * 1024 ** 3
  const heapMb = opts.maxOldSpaceMb ?? 1024
  const slots: Slot[] = Array.from({ length: size }, () => ({ child: null, busy: false, pending: new Map() }))
  const waiting: Array<(slot: Slot) => void> = []
  let nextId = 1
  let closed = false

  const spawn = (slot: Slot): ChildProcess => {
    const child = fork(CHILD_ENTRY, [], {
      execArgv: [
        ...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size')),
        `--max-old-space-size=${heapMb}`,
      ],
      env: {
        ...process.env,
        QUIRE_OCR_WORKERS: String(opts.ocrWorkers ?? 1),
        QUIRE_OCR_ENGINE: opts.ocrEngine ?? DEFAULT_OCR_ENGINE,
      },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    child.on('message', (reply: Reply) => {
      const p = slot.pending.get(reply.id)
      if (!p) return
      slot.pending.delete(reply.id)
      if (reply.rss > maxRss) retire(slot)
      if ('warmed' in reply) {
        if (reply.ok)
          p.resolve({ rssBytes: reply.rss, ...(reply.ocrText === undefined ? {} : { ocrText: reply.ocrText }) })
        else p.reject(new ExtractionError('ocr_unavailable', reply.error ?? 'OCR engine could not start'))
      } else if (reply.ok) p.resolve({ ...reply.result, cpuMs: reply.cpuMs, rssBytes: reply.rss })
      else {
        // A failed request cost CPU too: the error carries it (`cpuMs`) for a caller that accounts for it.
        const err = reply.error.code
          ? new ExtractionError(reply.error.code, reply.error.message)
          : Object.assign(new Error(reply.error.message), { name: reply.error.name })
        p.reject(Object.assign(err, { cpuMs: reply.cpuMs }))
      }
    })
    child.on('exit', (code, signal) => {
      if (slot.child === child) slot.child = null
      for (const [id, p] of slot.pending) {
        slot.pending.delete(id)
        p.reject(new Error(`parse process exited (${signal ?? code}) while parsing`))
      }
    })
    return child
  }

  const retire = (slot: Slot) => {
    const child = slot.child
    slot.child = null
    child?.disconnect()
    setTimeout(() => child?.kill('SIGKILL'), 10_000).unref()
  }

  const acquire = (): Promise<Slot> => {
    const free = slots.find((s) => !s.busy)
    if (free) {
      free.busy = true
      return Promise.resolve(free)
    }
    return new Promise((resolve) => waiting.push(resolve))
  }
  const release = (slot: Slot) => {
    const next = waiting.shift()
    if (next) next(slot)
    else slot.busy = false
  }

  /** Sends one request to the slot's child (started if it has none) and waits for its reply. */
  const request = (slot: Slot, message: Record<string, unknown>): Promise<ParseOutcome | { rssBytes: number }> => {
    slot.child ??= spawn(slot)
    const child = slot.child
    const id = nextId++
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject })
      child.send({ ...message, id })
    })
  }

  return {
    async parse(path, type, options = {}) {
      if (closed) throw new Error('parse pool closed')
      const slot = await acquire()
      try {
        // The child reads under this process's file limits (configured from its environment).
        const languages = options.languages?.length ? { languages: [...options.languages] } : {}
        return (await request(slot, { path, type, limits: fileLimits(), ...languages })) as ParseOutcome
      } finally {
        release(slot)
      }
    },
    async warm(what) {
      if (closed) throw new Error('parse pool closed')
      const held = await Promise.all(slots.map(() => acquire()))
      try {
        return await Promise.all(held.map((slot) => request(slot, { warm: what })))
      } finally {
        for (const slot of held) release(slot)
      }
    },
    async close() {
      closed = true
      await Promise.all(
        slots.map(async (s) => {
          const child = s.child
          if (!child) return
          const exited = new Promise((r) => child.once('exit', r))
          retire(s)
          await exited
        }),
      )
    },
  }
}
