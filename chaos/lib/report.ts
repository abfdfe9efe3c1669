// A chaos scenario's result row, as `npm run chaos` collects and prints them: the invariant checks it made, whether all
// held, how long the system took to recover after the fault, and the peak RSS of each app's process tree.
import { appendFileSync } from 'node:fs'
import type { ChaosStack } from './stack.ts'

/** `npm run chaos -- --quick`: fewer jobs, fewer requests, shorter outages (CI-sized). */
export const QUICK = process.env.CHAOS_QUICK === '1'

export type Check = { name: string; ok: boolean; detail?: string }

export type ChaosRow = {
  scenario: string
  checks: Check[]
  passed: boolean
  /** Seconds from the end of the (last) fault until everything was final again; null where no fault ends. */
  recovery_s: number | null
  /** Peak RSS of each app's process tree (its parse processes included), MB. */
  peak_rss_mb: Record<string, number>
  detail: string
  seconds: number
}

export type ScenarioContext = {
  check(name: string, ok: boolean, detail?: string): void
  checks: Check[]
  /** Set by the scenario: seconds to recover after the fault. */
  recovery: { seconds: number | null }
  detail: string[]
  /** The stacks the scenario started: their peak RSS goes into the row and they are stopped at the end. */
  stacks: ChaosStack[]
}

/** Runs one scenario and records its row; an exception is a failed check, never a lost row. */
export async function scenario(name: string, fn: (ctx: ScenarioContext) => Promise<void>): Promise<void> {
  const t0 = Date.now()
  const ctx: ScenarioContext = {
    checks: [],
    check(checkName, ok, detail) {
      ctx.checks.push({ name: checkName, ok, ...(detail ? { detail } : {}) })
      console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${name} · ${checkName}${detail ? ` — ${detail}` : ''}`)
    },
    recovery: { seconds: null },
    detail: [],
    stacks: [],
  }
  // Interrupted (Ctrl-C, or `npm run chaos` stopping): stop the apps and servers this scenario started, then leave.
  const interrupted = async () => {
    await Promise.all(ctx.stacks.map((s) => s.stop().catch(() => {})))
    process.exit(130)
  }
  process.once('SIGTERM', interrupted)
  process.once('SIGINT', interrupted)
  try {
    await fn(ctx)
  } catch (e) {
    ctx.check('scenario ran to the end', false, e instanceof Error ? (e.stack ?? e.message) : String(e))
  }
  const peak: Record<string, number> = {}
  for (const s of ctx.stacks) {
    for (const [app, mb] of Object.entries(s.peakRss())) peak[app] = Math.max(peak[app] ?? 0, Math.round(mb))
  }
  for (const s of ctx.stacks) {
    await s.stop().catch((e) => console.error(`  could not stop a stack: ${e.message}`))
  }
  const row: ChaosRow = {
    scenario: name,
    checks: ctx.checks,
    passed: ctx.checks.length > 0 && ctx.checks.every((c) => c.ok),
    recovery_s: ctx.recovery.seconds === null ? null : Math.round(ctx.recovery.seconds * 10) / 10,
    peak_rss_mb: peak,
    detail: ctx.detail.join('; '),
    seconds: Math.round((Date.now() - t0) / 1000),
  }
  if (process.env.CHAOS_RESULTS) appendFileSync(process.env.CHAOS_RESULTS, `${JSON.stringify(row)}\n`)
  console.log(`  ${name}: ${row.passed ? 'passed' : 'FAILED'} (${row.seconds} s)`)
  // One scenario per process: whatever a fault left open (a reconnecting client, a timer) must not keep it alive.
  process.exit(0)
}
