import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DestinationsEnv, destinationsConfig } from './destinations.ts'

const parse = (raw?: string) =>
  destinationsConfig(DestinationsEnv.parse(raw === undefined ? {} : { QUIRE_DESTINATIONS: raw }))

// DESIGN, Configuration: QUIRE_DESTINATIONS is `{}` by default; entries are a directory or an S3-compatible bucket.
describe('destinationsConfig', () => {
  it('defaults to none', () => {
    expect(parse()).toEqual({})
    expect(parse('')).toEqual({})
  })

  it('maps directories (resolved) and S3 buckets', () => {
    const c = parse(
      JSON.stringify({
        local: { type: 'dir', path: 'results' },
        lake: { type: 's3', bucket: 'b', prefix: 'quire', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1' },
      }),
    )
    expect(c.local).toEqual({ type: 'dir', path: path.resolve('results') })
    expect(c.lake).toMatchObject({ type: 's3', bucket: 'b', prefix: 'quire', region: 'eu-west-1' })
    expect(c.lake).toMatchObject({ endpoint: 'http://127.0.0.1:9000' })
  })

  it('refuses a bad value at start, naming the entry', () => {
    expect(() => parse('{')).toThrow(/QUIRE_DESTINATIONS is not valid JSON/)
    expect(() => parse(JSON.stringify({ x: { type: 'ftp', path: '/' } }))).toThrow(/QUIRE_DESTINATIONS is invalid: x/)
    expect(() => parse(JSON.stringify({ x: { type: 'dir' } }))).toThrow(/x\.path/)
    expect(() => parse(JSON.stringify({ 'a/b': { type: 'dir', path: '/tmp' } }))).toThrow(/invalid/)
  })
})
