// s3rver ships no types; this covers the part the S3 fixture uses.
declare module 's3rver' {
  type S3rverOptions = {
    address?: string
    port?: number
    silent?: boolean
    directory?: string
    resetOnClose?: boolean
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[]
  }
  export default class S3rver {
    constructor(options?: S3rverOptions)
    run(): Promise<{ address: string; port: number; family: string }>
    close(): Promise<void>
  }
}
