import { describe, expect, it } from 'vitest'
import { parseClusterUrl } from './connection.ts'

describe('REDIS_URL forms', () => {
  it('a redis:// URL names one server, not a cluster', () => {
    expect(parseClusterUrl('redis://127.0.0.1:6379')).toBeNull()
  })

  it('redis+cluster:// lists the nodes discovery starts from, with credentials and TLS', () => {
    expect(parseClusterUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      auth: {},
      tls: false,
    })
    expect(parseClusterUrl('rediss+cluster://app:s%40cret@redis.internal:6380/')).toEqual({
      nodes: [{ host: 'redis.internal', port: 6380 }],
      auth: { username: 'app', password: 's@cret' },
      tls: true,
    })
    expect(parseClusterUrl('redis+cluster://[::1]:7000')?.nodes).toEqual([{ host: '::1', port: 7000 }])
  })

  it('refuses a node that is not host:port', () => {
    expect(() => parseClusterUrl('redis+cluster://a:99999')).toThrow(/host:port/)
    expect(() => parseClusterUrl('redis+cluster://')).toThrow(/at least one node/)
  })
})
