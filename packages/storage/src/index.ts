export { createFsBlobStore } from './blob-store.ts'
export type { BlobStore, StoredBlob } from './blob-store.ts'
export { createS3BlobStore, blobNotFound } from './s3-blob-store.ts'
export type { S3BlobStoreOptions } from './s3-blob-store.ts'
export { createBlobStore } from './create-blob-store.ts'
export type { BlobStoreConfig } from './create-blob-store.ts'
export { createBucketSources } from './bucket-source.ts'
export type {
  BucketConfig,
  BucketsConfig,
  BucketSources,
  BucketSourceOptions,
  LocalBucketConfig,
  S3BucketConfig,
} from './bucket-source.ts'
export { createDestinations } from './destinations.ts'
export type { Destinations, DestinationConfig, DestinationsConfig } from './destinations.ts'
