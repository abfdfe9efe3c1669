// Starts the bare submit baseline (bench/baselines/bare-submit.ts), the submit floor (floor-submit.ts), or one of the
// references (domain-submit.ts, rows-submit.ts), as its own process, like the API.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { appNodeFlags } from '@quire/testing'
import { type Apps, freePort, freshDatabase, ROOT, sleep, startApps, stopChild } from './kit.ts'

/** A baseline app started by `startSubmitBaseline`. */
export type BaselineApp = { url: string; pid: number; stop(): Promise<void> }

type BaselineScript = 'bare-submit.ts' | 'domain-submit.ts' | 'rows-submit.ts' | 'floor-submit.ts'

/** What a baseline shares with the API it is measured against: the database and the queue prefix. */
type BaselineEnv = { DATABASE_URL: string; QUIRE_QUEUE_PREFIX: string }

/** A submit baseline as its own process: the bare app (default) or the bare app calling Quire's domain. */
export async function startSubmitBaseline(
  env: BaselineEnv,
  script: BaselineScript = 'bare-submit.ts',
): Promise<BaselineApp> {
  const port = await freePort()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-bare-'))
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the baseline too, to compare with the API's.
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      // Quire's domain calls run as the API runs them (its Node flags); the bare app, the floor and the rows reference as
      // written.
      ...(script === 'domain-submit.ts' ? appNodeFlags(ROOT, 'api') : []),
      '--conditions=@quire/source',
      '--import',
      'tsx',
      path.join(ROOT, 'bench', 'baselines', script),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, BENCH_PORT: String(port), BENCH_UPLOAD_DIR: dir },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  )
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const failed =
      child.exitCode !== null ? `${script} exited` : Date.now() > deadline ? `${script} did not start` : null
    if (failed) {
      // Nothing is left running when it never came up.
      await stopChild(child)
      rmSync(dir, { recursive: true, force: true })
      throw new Error(failed)
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch {}
    await sleep(100)
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      await stopChild(child)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Several baselines started side by side (a process each), in the order given. When one does not start, those that
 * did are stopped before the error goes to the caller.
 */
export async function startSubmitBaselines<const S extends readonly BaselineScript[]>(
  env: BaselineEnv,
  scripts: S,
): Promise<{ [K in keyof S]: BaselineApp }> {
  const started = await Promise.allSettled(scripts.map((script) => startSubmitBaseline(env, script)))
  const apps = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = started.find((s) => s.status === 'rejected')
  if (failed) {
    await Promise.all(apps.map((app) => app.stop()))
    throw failed.reason
  }
  return apps as { [K in keyof S]: BaselineApp }
}

/**
 * The API and submit baselines started side by side on one database and queue prefix: each start is mostly its own
 * module loading, and the quick run's budget is minutes. When one does not start, those that did are stopped (and the
 * database dropped) before the error goes to the caller.
 */
export async function startApiWithBaselines<const S extends readonly BaselineScript[]>(
  label: string,
  scripts: S,
): Promise<{ apps: Apps; baselines: { [K in keyof S]: BaselineApp } }> {
  const database = await freshDatabase(label)
  const env = { DATABASE_URL: database.url, QUIRE_QUEUE_PREFIX: `{bench${randomBytes(4).toString('hex')}}` }
  const [apps, baselines] = await Promise.allSettled([
    startApps(label, { apps: ['api'], database, env: { QUIRE_QUEUE_PREFIX: env.QUIRE_QUEUE_PREFIX } }),
    startSubmitBaselines(env, scripts),
  ])
  if (apps.status === 'fulfilled' && baselines.status === 'fulfilled')
    return { apps: apps.value, baselines: baselines.value }
  // A failed startApps has dropped the database already; failed baselines have stopped their own processes.
  if (apps.status === 'fulfilled') await apps.value.stop()
  if (baselines.status === 'fulfilled') await Promise.all(baselines.value.map((b) => b.stop()))
  throw apps.status === 'rejected' ? apps.reason : (baselines as PromiseRejectedResult).reason
}
