import ipaddr from 'ipaddr.js'

// Global unicast IPv6 (2000::/3). Anything outside it (e.g. IPv4-compatible ::a.b.c.d, which
// ipaddr.js still calls 'unicast') is not a public destination.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

/**
 * True when `ip` is an IP literal in public unicast space: ipaddr.js `range()` is `'unicast'`
 * (so private, loopback, link-local, unique-local, unspecified, multicast, broadcast, CGNAT,
 * reserved/documentation, 6to4, Teredo, NAT64, ... are all refused), IPv4-mapped IPv6 is judged
 * as the IPv4 it maps to, and IPv6 must also be inside 2000::/3. False for anything unparsable.
 */
export function isPublicAddress(ip: string): boolean {
  const literal = stripBrackets(ip)
  // Zone ids (fe80::1%eth0) only make sense for link-local targets. ipaddr.js also accepts
  // legacy IPv4 forms like "0x7f.1"; only canonical dotted-quad or IPv6 text counts here.
  if (literal.includes('%')) return false
  if (!ipaddr.IPv4.isValidFourPartDecimal(literal) && !ipaddr.IPv6.isValid(literal)) return false
  const addr = ipaddr.process(literal)
  if (addr.range() !== 'unicast') return false
  return addr.kind() === 'ipv4' || (addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)
}

export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}
