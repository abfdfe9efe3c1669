import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { createSecureContext } from 'node:tls'
import { Agent, buildConnector } from 'undici'
import { isPublicAddress, stripBrackets } from './public-address.guard.ts'

/** Options of {@link createGuardedDispatcher}. */
export type GuardedDispatcherOptions = {
  /** Skip the address check (development and tests only). */
  allowPrivate: boolean
  /** TCP + TLS handshake timeout, in milliseconds (spec: 10 s). */
  connectTimeoutMs: number
  /** Extra trust anchors (PEM). When set, they replace Node's default CA list, as in `tls.connect`. */
  ca?: string | Buffer | Array<string | Buffer>
}

/** Error raised at connect time when a receiver resolves to (or is) a non-public address. */
export class BlockedAddressError extends Error {
  readonly code = 'QUIRE_WEBHOOK_ADDRESS_BLOCKED'
  readonly address: string

  constructor(host: string, address: string) {
    super(`refusing to connect to ${host}: ${address} is not a public address`)
    this.name = 'BlockedAddressError'
    this.address = address
    Object.setPrototypeOf(this, new.target.prototype)
  }
}

/**
 * An undici Agent for webhook deliveries that re-checks the destination at connect time, so a
 * host that passed `assertWebhookUrl` and later re-resolves to a private address (DNS rebinding)
 * is still refused. Host names go through a guarded `lookup` (every resolved address must be
 * public, and the socket connects to the checked address); IP literals, which Node connects to
 * without a lookup, are checked before connecting. With `allowPrivate` only the timeout applies.
 * Redirects are never followed by this agent.
 */
export function createGuardedDispatcher({ allowPrivate, connectTimeoutMs, ca }: GuardedDispatcherOptions): Agent {
  const base = buildConnector({
    timeout: connectTimeoutMs,
    // Built once: given `ca` alone, every TLS connection would parse the whole list again (with the public roots
    // plus an extra CA, about 150 certificates, tens of milliseconds of CPU per connection).
    ...(ca !== undefined ? { secureContext: createSecureContext({ ca }) } : {}),
    ...(allowPrivate ? {} : { lookup: guardedLookup }),
  })
  if (allowPrivate) return new Agent({ connect: base })

  const connect: buildConnector.connector = (options, callback) => {
    const host = stripBrackets(options.hostname)
    if (isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(new BlockedAddressError(host, host), null)
      return
    }
    base(options, callback)
  }
  return new Agent({ connect })
}

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  const lookupOptions: LookupOptions & { all: true } = { ...options, all: true }
  dnsLookup(hostname, lookupOptions, (err, addresses: LookupAddress[]) => {
    if (err) {
      callback(err, '', 0)
      return
    }
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address))
    const first = addresses[0]
    if (blocked !== undefined || first === undefined) {
      const error = new BlockedAddressError(hostname, blocked?.address ?? '(none)')
      callback(error as NodeJS.ErrnoException, '', 0)
      return
    }
    if (options.all) callback(null, addresses)
    else callback(null, first.address, first.family)
  })
}
