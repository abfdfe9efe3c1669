import { describe, expect, it } from 'vitest'
import { isPublicAddress } from './public-address.guard.ts'

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '[2606:4700:4700::1111]', '::ffff:8.8.8.8'])(
    'accepts public unicast %s',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true)
    },
  )

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'CGNAT'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'zoned link-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::7f00:1', 'IPv4-compatible'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['2002:7f00:1::', '6to4'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['0x7f.1', 'legacy IPv4 notation'],
    ['2130706433', 'integer IPv4 notation'],
    ['example.com', 'not an IP literal'],
    ['', 'empty'],
  ])('rejects %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })
})
