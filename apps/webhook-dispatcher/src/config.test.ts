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
})
