import { createFsBlobStore, type BlobStore } from './blob-store.ts'
import { createS3BlobStore, type S3BlobStoreOptions } from './s3-blob-store.ts'

/** Which blob store a process uses; `blobStoreConfig` (@quire/config) builds it from the environment. */
export type BlobStoreConfig = { type: 'fs'; dir: string } | ({ type: 's3' } & S3BlobStoreOptions)

export function createBlobStore(config: BlobStoreConfig): BlobStore {
  if (config.type === 'fs') return createFsBlobStore({ dir: config.dir })
  const { type: _type, ...opts } = config
  return createS3BlobStore(opts)
}
