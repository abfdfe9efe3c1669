import ipaddr from 'ipaddr.js';

// Global unicast IPv6 (2000::/3). Anything outside it (e.g. IPv4-compatible ::a.b.c.d, which
// ipaddr.js still calls 'unicast') is not a public destination.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True when `ip` is an IP literal in public unicast space: ipaddr.js `range()` is `'unicast'`
 * (so private, loopback, link-local, unique-local, unspecified, multicast, broadcast, CGNAT,
 * reserved/documentation, 6to4, Teredo, NAT64, ... are all refused), IPv4-mapped IPv6 is judged
 * as the IPv4 it maps to, and IPv6 must also be inside 2000::/3. False for anything unparsable.
 */
export function isPublicAddress(ip: string): boolean {
  const literal = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // ipaddr.js also accepts legacy forms like "0x7f.1"; only canonical dotted-quad / IPv6 text counts.
  if (!ipaddr.IPv4.isValidFourPartDecimal(literal) && !ipaddr.IPv6.isValid(literal)) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(literal.includes('%') ? literal.slice(0, literal.indexOf('%')) : literal);
  } catch {
    return false;
  }
  if (literal.includes('%')) return false; // zone ids only make sense for link-local targets
  if (addr.range() !== 'unicast') return false;
  if (addr.kind() === 'ipv6') return (addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
  return true;
}
