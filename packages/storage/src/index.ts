export { createFsBlobStore } from './blob-store.ts'
export type { BlobStore } from './blob-store.ts'
export { createBucketSources } from './bucket-source.ts'
export type { BucketConfig, BucketsConfig, BucketSources, BucketSourceOptions, LocalBucketConfig, S3BucketConfig } from './bucket-source.ts'
