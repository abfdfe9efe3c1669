import { describe, expect, it } from 'vitest'
import { clusterSafePrefix } from './index.ts'

describe('QUIRE_QUEUE_PREFIX', () => {
  it('becomes a Redis Cluster hash tag, so every queue key hashes to one slot', () => {
    expect(clusterSafePrefix('quire')).toBe('{quire}')
  })
  it('a prefix that already holds a tag is kept as it is', () => {
    expect(clusterSafePrefix('{quire}')).toBe('{quire}')
    expect(clusterSafePrefix('prod:{quire}')).toBe('prod:{quire}')
  })
})
