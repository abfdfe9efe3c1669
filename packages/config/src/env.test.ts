import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { BoolEnv, ConfigError, configOrExit, EX_CONFIG, intEnv, intListEnv, parseEnv } from './env.ts'
import { SharedEnv } from './index.ts'

const Env = z.object({
  QUIRE_WINDOW_MS: intEnv({ min: 0, default: 50_000 }),
  QUIRE_PORT: intEnv({ min: 1, max: 65535, default: 3000 }),
  QUIRE_OFFSET: intEnv({ default: 0 }),
  QUIRE_FLAG: BoolEnv.default(false),
  QUIRE_ON: BoolEnv.default(true),
  QUIRE_SCHEDULE_MS: intListEnv({ min: 0, default: [100, 200] }),
  QUIRE_NAME: z.string().default('quire'),
})

const parse = (env: Record<string, string>) => parseEnv(Env, env)

/** The ConfigError's problems for an environment, or a failure when it parses. */
function problems(env: Record<string, string>): string[] {
  try {
    parse(env)
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  throw new Error(`${JSON.stringify(env)} was accepted`)
}

describe('parseEnv', () => {
  it('an unset, empty or blank value takes the default, for every kind of variable', () => {
    const defaults = {
      QUIRE_WINDOW_MS: 50_000,
      QUIRE_PORT: 3000,
      QUIRE_OFFSET: 0,
      QUIRE_FLAG: false,
      QUIRE_ON: true,
      QUIRE_SCHEDULE_MS: [100, 200],
      QUIRE_NAME: 'quire',
    }
    expect(parse({})).toEqual(defaults)
    const names = Object.keys(defaults)
    expect(parse(Object.fromEntries(names.map((n) => [n, ''])))).toEqual(defaults)
    expect(parse(Object.fromEntries(names.map((n) => [n, ' \t ']))), 'blank').toEqual(defaults)
  })

  it('reads plain decimal integers within their bounds', () => {
    expect(parse({ QUIRE_WINDOW_MS: '0', QUIRE_PORT: '65535', QUIRE_OFFSET: '-5' })).toMatchObject({
      QUIRE_WINDOW_MS: 0,
      QUIRE_PORT: 65535,
      QUIRE_OFFSET: -5,
    })
    expect(parse({ QUIRE_PORT: '1' }).QUIRE_PORT).toBe(1)
  })

  it('refuses hex, exponents, fractions, trailing junk, spaces, signs and words, naming the variable and value', () => {
    for (const bad of ['0x10', '1e3', '12abc', '1.5', ' 12 ', '+5', '-0', '-1', 'Infinity', 'NaN', '１２']) {
      expect(problems({ QUIRE_WINDOW_MS: bad }), bad).toEqual([
        `QUIRE_WINDOW_MS=${JSON.stringify(bad)}: expected a decimal integer of at least 0`,
      ])
    }
    // Beyond what a double holds exactly: refused rather than rounded.
    expect(problems({ QUIRE_OFFSET: '9007199254740993' })).toEqual([
      'QUIRE_OFFSET="9007199254740993": expected a decimal integer',
    ])
  })

  it('refuses a value out of range, saying the range', () => {
    expect(problems({ QUIRE_PORT: '0' })).toEqual(['QUIRE_PORT="0": expected a decimal integer from 1 to 65535'])
    expect(problems({ QUIRE_PORT: '65536' })).toEqual([
      'QUIRE_PORT="65536": expected a decimal integer from 1 to 65535',
    ])
  })

  it('booleans: true/false, 1/0, yes/no, on/off in any case; another word is refused, not false', () => {
    for (const word of ['true', 'TRUE', '1', 'yes', 'Yes', 'on', 'ON'])
      expect(parse({ QUIRE_FLAG: word }).QUIRE_FLAG, word).toBe(true)
    for (const word of ['false', 'False', '0', 'no', 'NO', 'off', 'Off'])
      expect(parse({ QUIRE_ON: word }).QUIRE_ON, word).toBe(false)
    for (const word of ['maybe', 'y', 'n', 'enabled', '2', ' true']) {
      expect(problems({ QUIRE_FLAG: word }), word).toEqual([
        `QUIRE_FLAG=${JSON.stringify(word)}: expected true/false, 1/0, yes/no or on/off`,
      ])
    }
  })

  it('integer lists: comma-separated, spaces around the commas allowed, each item a plain decimal', () => {
    expect(parse({ QUIRE_SCHEDULE_MS: '10, 20 ,30' }).QUIRE_SCHEDULE_MS).toEqual([10, 20, 30])
    for (const bad of ['10,1e3', '0x10', '10,-1', '1.5,2']) {
      expect(problems({ QUIRE_SCHEDULE_MS: bad }), bad).toEqual([
        `QUIRE_SCHEDULE_MS=${JSON.stringify(bad)}: expected comma-separated decimal integers of at least 0`,
      ])
    }
  })

  it('reports every bad variable together, in one ConfigError whose message lists them all', () => {
    const env = { QUIRE_WINDOW_MS: '0x10', QUIRE_PORT: '70000', QUIRE_FLAG: 'maybe', QUIRE_NAME: 'fine' }
    expect(() => parse(env)).toThrow(ConfigError)
    expect(problems(env)).toEqual([
      'QUIRE_WINDOW_MS="0x10": expected a decimal integer of at least 0',
      'QUIRE_PORT="70000": expected a decimal integer from 1 to 65535',
      'QUIRE_FLAG="maybe": expected true/false, 1/0, yes/no or on/off',
    ])
    expect(() => parse(env)).toThrow(/QUIRE_WINDOW_MS[\s\S]*QUIRE_PORT[\s\S]*QUIRE_FLAG/)
  })

  it('never echoes the value of a variable that may hold a credential', () => {
    const Secretive = z.object({ QUIRE_SECRETS_KEY: z.string().min(44), DATABASE_URL: z.string().url() })
    let thrown: unknown
    try {
      parseEnv(Secretive, { QUIRE_SECRETS_KEY: 'hunter2', DATABASE_URL: 'pw-in-here' })
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    const { problems } = thrown as ConfigError
    expect(problems.map((p) => p.split(' ')[0])).toEqual(['QUIRE_SECRETS_KEY', 'DATABASE_URL'])
    expect(problems.join('\n')).not.toMatch(/hunter2|pw-in-here/)
  })

  it('the shared variables follow the same rules', () => {
    expect(parseEnv(SharedEnv, { QUIRE_SHUTDOWN_GRACE_MS: '', QUIRE_QUEUE_PREFIX: ' ' })).toMatchObject({
      QUIRE_SHUTDOWN_GRACE_MS: 25_000,
      QUIRE_QUEUE_PREFIX: 'quire',
    })
    expect(() => parseEnv(SharedEnv, { QUIRE_STAGE_ATTEMPTS: '1e3' })).toThrow(
      'QUIRE_STAGE_ATTEMPTS="1e3": expected a decimal integer of at least 1',
    )
  })
})

describe('configOrExit', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('returns what the loader returns', () => {
    expect(configOrExit(() => ({ port: 3000 }))).toEqual({ port: 3000 })
  })

  it('on a ConfigError: one message listing every problem, no stack, exit code 78', () => {
    const written: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`)
    })
    expect(() => configOrExit(() => parse({ QUIRE_WINDOW_MS: '1e3', QUIRE_FLAG: 'maybe' }))).toThrow('exit 78')
    expect(exit).toHaveBeenCalledWith(EX_CONFIG)
    expect(EX_CONFIG).toBe(78)
    const message = written.join('')
    expect(message).toBe(
      'Invalid configuration; not starting. Fix these environment variables:\n' +
        '  - QUIRE_WINDOW_MS="1e3": expected a decimal integer of at least 0\n' +
        '  - QUIRE_FLAG="maybe": expected true/false, 1/0, yes/no or on/off\n',
    )
  })

  it('any other error is not a configuration problem: it propagates as it is', () => {
    const exit = vi.spyOn(process, 'exit')
    expect(() =>
      configOrExit(() => {
        throw new TypeError('a bug')
      }),
    ).toThrow(TypeError)
    expect(exit).not.toHaveBeenCalled()
  })
})
