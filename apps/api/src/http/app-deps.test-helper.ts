// The API's dependencies for tests that build the real app without a running stack: no database or blob store behind
// them unless a test gives its own, Redis up, nothing dispatched. Each test overrides what it exercises.
import os from 'node:os'
import { ephemeralSecretBox } from '@quire/secrets'
import pino from 'pino'
import { config } from '../config.ts'
import type { AppDeps } from './context.ts'

export function testAppDeps(
  overrides: Partial<Omit<AppDeps, 'config'>> & { config?: Partial<AppDeps['config']> } = {},
): AppDeps {
  return {
    secrets: ephemeralSecretBox(),
    db: {} as AppDeps['db'],
    blobs: {} as AppDeps['blobs'],
    pages: {} as AppDeps['pages'],
    log: pino({ level: 'silent' }),
    kickRelay: () => {},
    dispatchOutbox: () => {},
    pingRedis: async () => 'PONG',
    redisDown: () => false,
    ...overrides,
    config: { ...config, uploadDir: os.tmpdir(), ...overrides.config },
  }
}
