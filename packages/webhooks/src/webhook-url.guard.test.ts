import { describe, expect, it } from 'vitest'
import { assertWebhookUrl, type HostLookup } from './webhook-url.guard.ts'

const strict = { allowPrivate: false, allowInsecure: false } as const
const lookupTo =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses
const failingLookup: HostLookup = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
}
const noLookup: HostLookup = async () => {
  throw new Error('lookup must not be called for IP literals')
}

describe('assertWebhookUrl', () => {
  it('accepts an https URL with a public IP literal without resolving it', async () => {
    const result = await assertWebhookUrl('https://93.184.216.34/hook', { ...strict, lookup: noLookup })
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.url.href).toBe('https://93.184.216.34/hook')
  })

  it('accepts a public IPv6 literal', async () => {
    const result = await assertWebhookUrl('https://[2606:4700:4700::1111]:8443/x', { ...strict, lookup: noLookup })
    expect(result.ok).toBe(true)
  })

  it('accepts a host name whose every address is public', async () => {
    const result = await assertWebhookUrl('https://hooks.example.com/in', {
      ...strict,
      lookup: lookupTo('93.184.216.34', '2606:2800:220:1::1'),
    })
    expect(result.ok).toBe(true)
  })

  it('requires https unless allowInsecure', async () => {
    expect(await assertWebhookUrl('http://93.184.216.34/hook', strict)).toMatchObject({
      ok: false,
      code: 'https_required',
    })
    expect((await assertWebhookUrl('http://93.184.216.34/hook', { ...strict, allowInsecure: true })).ok).toBe(true)
  })

  it.each(['ftp://93.184.216.34/x', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://93.184.216.34/'])(
    'refuses the non-http scheme %s',
    async (url) => {
      expect(await assertWebhookUrl(url, { allowPrivate: true, allowInsecure: true })).toMatchObject({
        ok: false,
        code: 'unsupported_scheme',
      })
    },
  )

  it.each(['/relative/hook', 'hooks.example.com/in', '', 'https://'])(
    'refuses the non-absolute URL %j',
    async (url) => {
      expect(await assertWebhookUrl(url, strict)).toMatchObject({ ok: false, code: 'invalid_url' })
    },
  )

  it('refuses credentials in the URL', async () => {
    expect(await assertWebhookUrl('https://user:pw@93.184.216.34/hook', strict)).toMatchObject({
      ok: false,
      code: 'credentials_in_url',
    })
    expect(await assertWebhookUrl('https://user@93.184.216.34/hook', strict)).toMatchObject({
      ok: false,
      code: 'credentials_in_url',
    })
  })

  it.each([
    'https://127.0.0.1/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://172.31.255.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.1.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[fc00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
  ])('refuses the non-public literal %s', async (url) => {
    expect(await assertWebhookUrl(url, { ...strict, lookup: noLookup })).toMatchObject({
      ok: false,
      code: 'private_address',
    })
  })

  it('refuses a host name that resolves to a private address', async () => {
    const result = await assertWebhookUrl('https://internal.example.com/hook', {
      ...strict,
      lookup: lookupTo('10.0.0.7'),
    })
    expect(result).toMatchObject({ ok: false, code: 'private_address' })
    if (!result.ok) expect(result.reason).toContain('10.0.0.7')
  })

  it('refuses a host name when any one of its addresses is private', async () => {
    const result = await assertWebhookUrl('https://mixed.example.com/hook', {
      ...strict,
      lookup: lookupTo('93.184.216.34', '::1'),
    })
    expect(result).toMatchObject({ ok: false, code: 'private_address' })
  })

  it('refuses localhost via the real resolver', async () => {
    expect(await assertWebhookUrl('https://localhost/hook', strict)).toMatchObject({
      ok: false,
      code: 'private_address',
    })
  })

  it('refuses unresolvable hosts, even when private targets are allowed', async () => {
    for (const lookup of [failingLookup, lookupTo()]) {
      expect(await assertWebhookUrl('https://nowhere.example.com/', { ...strict, lookup })).toMatchObject({
        ok: false,
        code: 'unresolvable_host',
      })
      expect(
        await assertWebhookUrl('https://nowhere.example.com/', { allowPrivate: true, allowInsecure: true, lookup }),
      ).toMatchObject({ ok: false, code: 'unresolvable_host' })
    }
  })

  it('allows private and loopback targets when allowPrivate is set', async () => {
    const opts = { allowPrivate: true, allowInsecure: false, lookup: lookupTo('10.0.0.7') }
    expect((await assertWebhookUrl('https://127.0.0.1:8443/hook', opts)).ok).toBe(true)
    expect((await assertWebhookUrl('https://[::1]/hook', opts)).ok).toBe(true)
    expect((await assertWebhookUrl('https://internal.example.com/hook', opts)).ok).toBe(true)
  })
})
