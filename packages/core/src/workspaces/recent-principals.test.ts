import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { type Principal, RecentPrincipals } from './api-keys.ts'

const principal = (keyHash: string): Principal => ({
  keyId: `key_${keyHash}`,
  workspaceId: 'ws_1',
  apiForm: 'B',
  scopes: ['jobs:write'],
  boundPipelineId: null,
  workspaceDefaultPipelineId: null,
  defaultRun: { pipelineId: 'parse', version: 1 },
  asRead: { keyHash, fingerprint: 'f'.repeat(32) },
})

/** The key's hash, as authenticateApiKey stores it in asRead (and as the database keeps keys). */
const hash = (key: string) => createHash('sha256').update(key).digest('hex')

describe('RecentPrincipals', () => {
  it('finds a principal by its plain key (kept by the hash), for maxAgeMs, and forgets it when told', () => {
    const recent = new RecentPrincipals({ maxAgeMs: 1_000, maxKeys: 10 })
    const p = principal(hash('qk_a'))
    recent.remember(p, 0)
    expect(recent.get('qk_a', 1_000)).toBe(p)
    expect(recent.get('qk_b', 1_000)).toBeUndefined()
    expect(recent.get('qk_a', 1_001)).toBeUndefined() // too old: read afresh
    recent.remember(p, 2_000)
    recent.forget(p)
    expect(recent.get('qk_a', 2_000)).toBeUndefined()
  })

  it('keeps at most maxKeys, dropping the one read longest ago', () => {
    const recent = new RecentPrincipals({ maxAgeMs: 60_000, maxKeys: 2 })
    for (const key of ['qk_1', 'qk_2']) recent.remember(principal(hash(key)), 0)
    recent.remember(principal(hash('qk_1')), 1) // read again: now the latest
    recent.remember(principal(hash('qk_3')), 2)
    expect(recent.get('qk_1', 3)).toBeDefined()
    expect(recent.get('qk_2', 3)).toBeUndefined()
    expect(recent.get('qk_3', 3)).toBeDefined()
  })
})
