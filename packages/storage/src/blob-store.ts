import { createReadStream } from 'node:fs'
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'

/** A stored object as `list` gives it. */
export type StoredBlob = { key: string; modifiedAt: Date }

/** Where uploaded files live between intake and retention. Keys are relative, slash-separated paths. */
export type BlobStore = {
  /** Moves a local temporary file into the store. */
  putFile(key: string, fromPath: string): Promise<void>
  /** Moves a stored object back out to a local path: undoes putFile (a submission that is to be served again). */
  takeFile(key: string, toPath: string): Promise<void>
  /** A local path for libraries that need one (PDF, OCR). */
  localPath(key: string): Promise<string>
  read(key: string): Readable
  delete(key: string): Promise<void>
  exists(key: string): Promise<boolean>
  /** Every stored object, in no set order (for sweeps of objects no job owns; never on a request's path). */
  list(): AsyncIterable<StoredBlob>
}

/** Moves a local file: a rename, or across filesystems (where rename fails) a copy and then the removal. */
export async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    await copyFile(from, to)
    await rm(from, { force: true })
  }
}

export function createFsBlobStore(opts: { dir: string }): BlobStore {
  const root = path.resolve(opts.dir)
  const resolve = (key: string) => {
    const p = path.resolve(root, key)
    if (!p.startsWith(root + path.sep)) throw new Error(`blob key escapes the store: ${key}`)
    return p
  }
  const madeDirs = new Set<string>()
  return {
    async putFile(key, fromPath) {
      const dest = resolve(key)
      const dir = path.dirname(dest)
      // Directories this process made are not made again (a system call per file, costly on some VMs); one removed
      // since (an operator's clean-up) is made again when the move finds it missing.
      const known = madeDirs.has(dir)
      if (!known) {
        await mkdir(dir, { recursive: true })
        madeDirs.add(dir)
      }
      try {
        await moveFile(fromPath, dest)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !known) throw err
        madeDirs.delete(dir)
        return this.putFile(key, fromPath)
      }
    },
    async takeFile(key, toPath) {
      await moveFile(resolve(key), toPath)
    },
    async localPath(key) {
      return resolve(key)
    },
    read: (key) => createReadStream(resolve(key)),
    async delete(key) {
      await rm(resolve(key), { force: true })
    },
    async exists(key) {
      try {
        await stat(resolve(key))
        return true
      } catch (err) {
        // Only "not there" means missing; a permission error or an unmounted volume is the store failing.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
        throw err
      }
    },
    list: () => listFiles(root),
  }
}

/** Files under `root` as slash-separated keys; one directory read at a time, so memory stays flat. */
async function* listFiles(root: string, dir = root): AsyncGenerator<StoredBlob> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (err) {
    // A store nothing was written to yet, or a directory removed while listing.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) yield* listFiles(root, p)
    else if (e.isFile()) {
      const st = await stat(p).catch(() => undefined)
      if (st) yield { key: path.relative(root, p).split(path.sep).join('/'), modifiedAt: st.mtime }
    }
  }
}
