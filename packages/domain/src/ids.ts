import { randomFillSync } from 'node:crypto'

const ID_BYTES = 12
// Random bytes for the next ids, refilled from the CSPRNG 256 ids at a time: one call per id cost a Buffer and a call
// into OpenSSL each (ids are made on every hot path: attempts, entries, events).
const pool = Buffer.allocUnsafe(ID_BYTES * 256)
let used = pool.length

/** Opaque, sortable-enough ids: a type prefix plus 12 random bytes in hex. */
export function newId(prefix: string): string {
  if (used + ID_BYTES > pool.length) {
    randomFillSync(pool)
    used = 0
  }
  const id = pool.toString('hex', used, used + ID_BYTES)
  used += ID_BYTES
  return `${prefix}_${id}`
}

export const documentIdFor = (jobId: string, position: number): string =>
  `${jobId.replace(/^job_/, 'doc_')}_${position}`
/** The job a document id was made for (`doc_<hex>_<n>[_<n>...]` → `job_<hex>`); undefined for another id. */
export function jobIdOfDocumentId(documentId: string): string | undefined {
  const m = /^doc_([0-9a-f]+)(?:_\d+)+$/.exec(documentId)
  return m ? `job_${m[1]}` : undefined
}
export const childDocumentIdFor = (parentId: string, n: number): string => `${parentId}_${n}`
export const holdIdFor = (jobId: string): string => `hold_${jobId}`
