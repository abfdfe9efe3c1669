export { createFsBlobStore } from './blob-store.ts'
export type { BlobStore } from './blob-store.ts'
