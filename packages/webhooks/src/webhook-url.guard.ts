import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { isPublicAddress, stripBrackets } from './public-address.guard.ts'

/** Resolves a host name to every address it has. */
export type HostLookup = (host: string) => Promise<string[]>

/** Options of {@link assertWebhookUrl}. */
export type AssertWebhookUrlOptions = {
  /** Allow private/loopback/link-local/... targets (development and tests only). */
  allowPrivate: boolean
  /** Allow `http://` (development and tests only). */
  allowInsecure: boolean
  /** Resolver; default `dns.promises.lookup(host, { all: true })`. Injected in tests. */
  lookup?: HostLookup
}

/** Why a webhook URL was refused. */
export type WebhookUrlRejection =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'https_required'
  | 'credentials_in_url'
  | 'unresolvable_host'
  | 'private_address'

/** Outcome of {@link assertWebhookUrl}. */
export type AssertWebhookUrlResult = { ok: true; url: URL } | { ok: false; code: WebhookUrlRejection; reason: string }

const defaultLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address)

/**
 * Checks a receiver URL at webhook creation: absolute http(s), https unless `allowInsecure`,
 * no user:password, and — unless `allowPrivate` — every address the host resolves to must be
 * public (see {@link isPublicAddress}). An unresolvable host is refused. Never throws.
 * This is a creation-time check only; deliveries must also use `createGuardedDispatcher`
 * because DNS answers can change afterwards (rebinding).
 */
export async function assertWebhookUrl(url: string, opts: AssertWebhookUrlOptions): Promise<AssertWebhookUrlResult> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return reject('invalid_url', 'url must be an absolute URL')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return reject('unsupported_scheme', `url scheme ${parsed.protocol} is not allowed; use https`)
  }
  if (parsed.protocol === 'http:' && !opts.allowInsecure) return reject('https_required', 'url must use https')
  if (parsed.username !== '' || parsed.password !== '') {
    return reject('credentials_in_url', 'url must not contain credentials; use the webhook auth settings')
  }
  const host = stripBrackets(parsed.hostname)
  if (host === '') return reject('invalid_url', 'url must have a host')

  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    try {
      addresses = await (opts.lookup ?? defaultLookup)(host)
    } catch {
      return reject('unresolvable_host', `host ${host} could not be resolved`)
    }
    if (addresses.length === 0) return reject('unresolvable_host', `host ${host} could not be resolved`)
  }
  if (!opts.allowPrivate) {
    const blocked = addresses.find((address) => !isPublicAddress(address))
    if (blocked !== undefined) {
      return reject('private_address', `host ${host} resolves to a non-public address (${blocked})`)
    }
  }
  return { ok: true, url: parsed }
}

function reject(code: WebhookUrlRejection, reason: string): AssertWebhookUrlResult {
  return { ok: false, code, reason }
}
