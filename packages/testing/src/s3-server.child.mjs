// s3rver in a process of its own, started by s3-server.fixture.ts with --openssl-legacy-provider: s3rver signs the
// continuation tokens of truncated ListObjectsV2 pages with DES, which OpenSSL 3 only has in its legacy provider.
// Prints {"port": n} once listening; stops on SIGTERM, or when its parent goes (stdin closes).
import S3rver from 's3rver'

const [directory, buckets] = process.argv.slice(2)
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: JSON.parse(buckets).map((name) => ({ name, configs: [] })),
})
const { port } = await server.run()
process.stdout.write(`${JSON.stringify({ port })}\n`)
const stop = () => void server.close().finally(() => process.exit(0))
process.on('SIGTERM', stop)
process.stdin.on('end', stop).resume()
