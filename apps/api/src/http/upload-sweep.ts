import { readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'

/**
 * Removes the temporary upload files a process left behind when it died mid-request (SIGKILL, a lost container):
 * regular files directly in the upload directory whose last write is older than `olderThanMs`. A request removes its
 * own files whatever happens to it, so a file this old belongs to no request under way: an upload in progress writes
 * to its file as bytes arrive (its mtime stays fresh), and Node's HTTP server ends a request after `requestTimeout`
 * (300 s), well inside the default age (QUIRE_UPLOAD_STALE_MS, 15 minutes). Several API processes may share the
 * directory; each sweeps it, and a file already gone is not an error.
 */
export async function sweepStaleUploads(opts: { dir: string; olderThanMs: number; now?: number }): Promise<number> {
  const cutoff = (opts.now ?? Date.now()) - opts.olderThanMs
  let entries: string[]
  try {
    entries = await readdir(opts.dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw err
  }
  let removed = 0
  for (const name of entries) {
    const file = path.join(opts.dir, name)
    try {
      const s = await stat(file)
      if (!s.isFile() || s.mtimeMs > cutoff) continue
      await rm(file, { force: true })
      removed++
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  return removed
}

/** Sweeps at start, then every half of `olderThanMs` (never keeping the process alive); `stop` ends it. */
export function startUploadSweep(opts: { dir: string; olderThanMs: number; log: Logger }): { stop(): void } {
  const pass = () =>
    sweepStaleUploads(opts).then(
      (n) => {
        if (n > 0) opts.log.info({ removed: n, dir: opts.dir }, 'removed temporary upload files left by a crash')
      },
      (err: unknown) => opts.log.warn({ err, dir: opts.dir }, 'upload sweep failed; next pass retries'),
    )
  void pass()
  const timer = setInterval(pass, Math.max(500, Math.floor(opts.olderThanMs / 2)))
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
