import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Db } from '@quire/db'
import type { OcrEngine } from '@quire/extraction'
import type { BlobStore } from '@quire/storage'

/** Options of {@link openStoreFixture}. */
export type StoreFixtureOptions = {
  /** Prefix of the temporary directory's name (`quire-<name>-`). */
  name: string
  /** Default: `DATABASE_URL`, the migrated database `npm test` made for this run. */
  databaseUrl?: string
  /** Rows every test of the file needs, written once after connecting (e.g. core's `ensurePlatformPipelines`). */
  prepare?: (db: Db) => Promise<unknown>
  /** Also an OCR engine (one worker, started on first use). */
  ocr?: boolean
}

/** What a core integration-test file works on: real PostgreSQL and a filesystem blob store of its own. */
export type StoreFixture = {
  db: Db
  /** A temporary directory of the file's own (submitted files are written here); removed by close(). */
  dir: string
  /** The blob store's directory, `<dir>/blobs`. */
  blobDir: string
  blobs: BlobStore
  /** Present when asked for with `ocr: true`. */
  ocr?: OcrEngine
  /** Closes the OCR engine and the database client and removes `dir`: give it to `afterAll`. */
  close(): Promise<void>
}

/**
 * Connects to the test database, makes a temporary directory with a filesystem blob store in it and runs `prepare`.
 * Call it at the top of a test file (`const store = await openStoreFixture(...)`, `afterAll(store.close)`).
 * Prisma, storage and extraction are loaded on call, so the package's other fixtures do not load them.
 */
export async function openStoreFixture(
  opts: StoreFixtureOptions & { ocr: true },
): Promise<StoreFixture & { ocr: OcrEngine }>
export async function openStoreFixture(opts: StoreFixtureOptions): Promise<StoreFixture>
export async function openStoreFixture(opts: StoreFixtureOptions): Promise<StoreFixture> {
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: run integration tests through `npm test`')
  const [{ createPrisma }, { createFsBlobStore }] = await Promise.all([import('@quire/db'), import('@quire/storage')])
  const ocr = opts.ocr ? (await import('@quire/extraction')).createOcrEngine({ workers: 1 }) : undefined
  const db = createPrisma(databaseUrl)
  const dir = await mkdtemp(path.join(tmpdir(), `quire-${opts.name}-`))
  const blobDir = path.join(dir, 'blobs')
  const close = async () => {
    await ocr?.close()
    await db.$disconnect()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await opts.prepare?.(db)
  } catch (error) {
    await close()
    throw error
  }
  return { db, dir, blobDir, blobs: createFsBlobStore({ dir: blobDir }), ocr, close }
}
