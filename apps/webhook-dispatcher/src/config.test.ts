import { ConfigError } from '@quire/config'
import { describe, expect, it } from 'vitest'
import { loadDispatcherConfig } from './config.ts'

describe('dispatcher configuration', () => {
  // Payload URLs (Form A `result_url`, Form B `status_url`) name the API a client can reach: the API's own origin.
  it('derives the public URL from QUIRE_API_PORT when QUIRE_PUBLIC_URL is not set (npm start on another port)', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, QUIRE_API_PORT: '3901' }
    delete env.QUIRE_PUBLIC_URL
    expect(loadDispatcherConfig(env).publicUrl).toBe('http://127.0.0.1:3901')
  })

  it('takes QUIRE_PUBLIC_URL as given, without a trailing slash', () => {
    const env = { ...process.env, QUIRE_API_PORT: '3901', QUIRE_PUBLIC_URL: 'https://quire.example.com/' }
    expect(loadDispatcherConfig(env).publicUrl).toBe('https://quire.example.com')
  })

  it('an empty QUIRE_PUBLIC_URL is unset: the URL is derived, not empty', () => {
    const env = { ...process.env, QUIRE_API_PORT: '3901', QUIRE_PUBLIC_URL: '' }
    expect(loadDispatcherConfig(env).publicUrl).toBe('http://127.0.0.1:3901')
  })

  it('refuses bad values all at once with a ConfigError naming each variable', () => {
    const env = {
      ...process.env,
      QUIRE_API_PORT: '0x10',
      QUIRE_WEBHOOK_TIMEOUT_MS: '30s',
      QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS: '100,1e3',
      QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS: 'maybe',
    }
    let thrown: unknown
    try {
      loadDispatcherConfig(env)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as ConfigError).problems.map((p) => p.split('=')[0])).toEqual([
      'QUIRE_API_PORT',
      'QUIRE_WEBHOOK_TIMEOUT_MS',
      'QUIRE_WEBHOOK_B_RETRY_SCHEDULE_MS',
      'QUIRE_ALLOW_PRIVATE_WEBHOOK_URLS',
    ])
  })
})
