import { z } from 'zod'

/**
 * Reading an app's configuration from the environment, with one set of rules for every variable: an empty or blank
 * value means unset (the default applies), numbers are plain decimal integers, booleans are true/false, 1/0, yes/no or
 * on/off, and anything else is refused. Every bad variable is reported at once, and the process stops with EX_CONFIG.
 */

/** sysexits' EX_CONFIG: supervisors (and `npm start`) should not restart an app that exits with it. */
export const EX_CONFIG = 78

/** A configuration a process cannot start with; each problem names its variable. */
export class ConfigError extends Error {
  readonly problems: string[]

  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems
    super(list.join('\n'))
    this.name = 'ConfigError'
    this.problems = list
  }
}

/** The environment without blank values: `QUIRE_X=` in a .env file or a compose file means "use the default". */
export function emptyAsUnset(source: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && value.trim() !== '') env[name] = value
  }
  return env
}

/** " from 1 to 65535", " of at least 0", or nothing. */
function boundsText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`
  if (min !== undefined) return ` of at least ${min}`
  if (max !== undefined) return ` of at most ${max}`
  return ''
}

/** One plain decimal integer: no sign unless negatives are allowed, no hex, exponent, fraction or spaces. */
function readInteger(text: string, min: number | undefined, max: number | undefined): number | undefined {
  const digits = min !== undefined && min >= 0 ? /^\d+$/ : /^-?\d+$/
  if (!digits.test(text)) return undefined
  const n = Number(text)
  if (!Number.isSafeInteger(n) || (min !== undefined && n < min) || (max !== undefined && n > max)) return undefined
  return n
}

/**
 * An integer variable. `Number()` and `z.coerce.number()` would take `0x10`, `1e3`, ` 12 ` or an empty value (as 0);
 * this takes digits only, within the bounds.
 */
export function intEnv(opts: { default: number; min?: number; max?: number }) {
  const expected = `expected a decimal integer${boundsText(opts.min, opts.max)}`
  return z
    .string()
    .transform((text, ctx) => {
      const n = readInteger(text, opts.min, opts.max)
      if (n === undefined) {
        ctx.addIssue({ code: 'custom', message: expected })
        return z.NEVER
      }
      return n
    })
    .default(opts.default)
}

/** Comma-separated integers (spaces around the commas allowed), each read like `intEnv`. */
export function intListEnv(opts: { default: number[]; min?: number; max?: number }) {
  const expected = `expected comma-separated decimal integers${boundsText(opts.min, opts.max)}`
  return z
    .string()
    .transform((text, ctx) => {
      const items = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
      const numbers = items.map((item) => readInteger(item, opts.min, opts.max))
      if (numbers.some((n) => n === undefined)) {
        ctx.addIssue({ code: 'custom', message: expected })
        return z.NEVER
      }
      return numbers as number[]
    })
    .default(() => [...opts.default])
}

const TRUE_WORDS = ['true', '1', 'yes', 'on']
const FALSE_WORDS = ['false', '0', 'no', 'off']

/** A boolean variable. `z.coerce.boolean()` would turn "false" into true; an unknown word is refused, not false. */
export const BoolEnv = z.string().transform((text, ctx) => {
  const word = text.toLowerCase()
  if (TRUE_WORDS.includes(word)) return true
  if (FALSE_WORDS.includes(word)) return false
  ctx.addIssue({ code: 'custom', message: 'expected true/false, 1/0, yes/no or on/off' })
  return z.NEVER
})

// Values of these are never echoed in an error message (they may be credentials or hold one).
const MAY_HOLD_A_SECRET = /KEY|TOKEN|SECRET|PASSWORD|_URL$/

function describeValue(name: string, value: string | undefined): string {
  if (value === undefined) return `${name} (unset)`
  if (MAY_HOLD_A_SECRET.test(name)) return `${name} (value not shown)`
  return `${name}=${JSON.stringify(value)}`
}

/**
 * Parses an environment with an app's schema, blank values counting as unset. Throws a ConfigError with one line per
 * bad variable (its name, the value given and what is expected), all of them at once.
 */
export function parseEnv<S extends z.ZodType>(schema: S, source: Record<string, string | undefined>): z.output<S> {
  const env = emptyAsUnset(source)
  const result = schema.safeParse(env)
  if (result.success) return result.data
  const problems = new Map<string, string>()
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? '(environment)')
    // The first thing wrong with a variable is enough to fix it.
    if (!problems.has(name)) problems.set(name, `${describeValue(name, env[name])}: ${issue.message}`)
  }
  throw new ConfigError([...problems.values()])
}

/** The message a process prints when its configuration is refused: no stack, which would only hide the list. */
export function formatConfigError(err: ConfigError): string {
  const lines = err.problems.map((p) => `  - ${p}`)
  return `Invalid configuration; not starting. Fix these environment variables:\n${lines.join('\n')}\n`
}

/**
 * Runs an app's configuration loader at start. A ConfigError prints one message and ends the process with EX_CONFIG
 * (78): a restart cannot fix a configuration, so supervisors should not retry. Any other error propagates.
 */
export function configOrExit<T>(load: () => T): T {
  try {
    return load()
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(formatConfigError(err))
    process.exit(EX_CONFIG)
  }
}
