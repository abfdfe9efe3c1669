import { randomBytes } from 'node:crypto'

/** Opaque, sortable-enough ids: a type prefix plus 16 random bytes in base32-ish hex. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`
}

export const documentIdFor = (jobId: string, position: number): string =>
  `${jobId.replace(/^job_/, 'doc_')}_${position}`
export const childDocumentIdFor = (parentId: string, n: number): string => `${parentId}_${n}`
export const holdIdFor = (jobId: string): string => `hold_${jobId}`
