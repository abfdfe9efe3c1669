// `npm start`'s decision when an app exits (app-exit.mjs, used by start.mjs): restart with backoff, except after a
// configuration error (exit code 78), which a restart cannot fix.
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

type AppExit = {
  EX_CONFIG: number
  afterAppExit: (exit: { code: number | null; upMs: number; restarts: number }) => {
    action: 'stop' | 'restart'
    exitCode?: number
    delayMs?: number
    attempt?: number
  }
  apiPortFromEnv: (value: string | undefined) => number | null
}
// Plain JavaScript without declarations (start.mjs runs before dependencies are installed): imported by URL.
const helper = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app-exit.mjs')
const { EX_CONFIG, afterAppExit, apiPortFromEnv }: AppExit = await import(pathToFileURL(helper).href)

describe('npm start, when an app exits', () => {
  it('stops everything with exit code 78 when the app refused its configuration, however long it ran', () => {
    expect(EX_CONFIG).toBe(78)
    for (const upMs of [100, 120_000]) {
      for (const restarts of [0, 3]) {
        expect(afterAppExit({ code: 78, upMs, restarts })).toEqual({ action: 'stop', exitCode: 78 })
      }
    }
  })

  it('restarts any other exit with backoff: 1 s doubling to 30 s, back to 1 s after a minute up', () => {
    expect(afterAppExit({ code: 1, upMs: 500, restarts: 0 })).toEqual({ action: 'restart', delayMs: 1000, attempt: 0 })
    expect(afterAppExit({ code: 1, upMs: 500, restarts: 2 })).toEqual({ action: 'restart', delayMs: 4000, attempt: 2 })
    expect(afterAppExit({ code: null, upMs: 500, restarts: 9 })).toMatchObject({ action: 'restart', delayMs: 30_000 })
    expect(afterAppExit({ code: 137, upMs: 61_000, restarts: 9 })).toEqual({
      action: 'restart',
      delayMs: 1000,
      attempt: 0,
    })
    expect(afterAppExit({ code: 0, upMs: 500, restarts: 0 }).action).toBe('restart')
  })
})

describe('npm start, the API port it waits on', () => {
  it('reads QUIRE_API_PORT as the API does; leaves anything that is not a port to the API to report', () => {
    expect(apiPortFromEnv(undefined)).toBe(3000)
    expect(apiPortFromEnv('  ')).toBe(3000)
    expect(apiPortFromEnv('3901')).toBe(3901)
    for (const bad of ['0x10', 'abc', ' 12 ', '70000', '1e3']) expect(apiPortFromEnv(bad), bad).toBeNull()
  })
})
