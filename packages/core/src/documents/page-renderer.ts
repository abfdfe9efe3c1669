import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ExtractionError, fileLimits, type ExtractionErrorCode, type FileType } from '@quire/extraction'

/** Renders page images off the caller's event loop (DESIGN, "Review desk"). */
export type PageRenderer = {
  /** PNG bytes of page `page` (1-based, of the file); rejects with an ExtractionError for a file it cannot draw. */
  render(path: string, type: FileType, page: number): Promise<Buffer>
  close(): Promise<void>
}

const CHILD_ENTRY = fileURLToPath(
  new URL(`./page-image.child${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
)

// Running from sources (tests, `npm start`): a process started without tsx (a vitest worker) gives it to the child.
const SOURCE_ARGS =
  CHILD_ENTRY.endsWith('.ts') && !process.execArgv.some((a) => a.includes('tsx'))
    ? ['--conditions=@quire/source', '--import', 'tsx']
    : []

type Reply =
  | { id: number; ok: true; png: Uint8Array }
  | { id: number; ok: false; error: { message: string; code?: ExtractionErrorCode } }

/**
 * One child process, started on the first page asked for and kept; requests queue in it (a reviewer asks for a page
 * once: the image is kept in blob storage). Its heap is bounded like a parse child's; a child that dies fails the
 * requests it had and the next request starts another. The process's file limits go with each request.
 */
export function createPageRenderer(opts: { maxOldSpaceMb?: number; timeoutMs?: number } = {}): PageRenderer {
  // A page that takes longer than this (a pathological PDF) ends its child: the requests queued behind it fail too,
  // and the next request starts a fresh child.
  const timeoutMs = opts.timeoutMs ?? 60_000
  let child: ChildProcess | null = null
  let nextId = 1
  const pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>()
  const start = () => {
    const c = fork(CHILD_ENTRY, [], {
      execArgv: [
        ...SOURCE_ARGS,
        ...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size') && !a.startsWith('--max-semi')),
        `--max-old-space-size=${opts.maxOldSpaceMb ?? 1024}`,
      ],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    c.on('message', (reply: Reply) => {
      const p = pending.get(reply.id)
      if (!p) return
      pending.delete(reply.id)
      if (reply.ok) p.resolve(Buffer.from(reply.png))
      else if (reply.error.code) p.reject(new ExtractionError(reply.error.code, reply.error.message))
      else p.reject(new Error(reply.error.message))
    })
    c.on('exit', (code, signal) => {
      if (child === c) child = null
      for (const [id, p] of pending) {
        pending.delete(id)
        p.reject(new Error(`page-image process exited (${signal ?? code}) while rendering`))
      }
    })
    return c
  }
  return {
    render(path, type, page) {
      child ??= start()
      const id = nextId++
      const c = child
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs)
        timer.unref()
        const done = () => clearTimeout(timer)
        pending.set(id, {
          resolve: (b) => (done(), resolve(b)),
          reject: (e) => (done(), reject(e)),
        })
        c.send({ id, path, type, page, limits: { ...fileLimits() } })
      })
    },
    async close() {
      const c = child
      child = null
      if (!c) return
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()))
      c.disconnect()
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())])
      if (c.exitCode === null) c.kill('SIGKILL')
    },
  }
}
