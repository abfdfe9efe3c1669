// Starts the bare submit baseline (bench/baselines/bare-submit.ts), or its domain reference
// (bench/baselines/domain-submit.ts), as its own process, like the API.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort, ROOT, sleep, stopChild } from './kit.ts'

/** A baseline app started by `startSubmitBaseline`. */
export type BaselineApp = { url: string; pid: number; stop(): Promise<void> }

/** A submit baseline as its own process: the bare app (default) or the bare app calling Quire's domain. */
export async function startSubmitBaseline(
  env: { DATABASE_URL: string; QUIRE_QUEUE_PREFIX: string },
  script: 'bare-submit.ts' | 'domain-submit.ts' = 'bare-submit.ts',
): Promise<BaselineApp> {
  const port = await freePort()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-bare-'))
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the baseline too, to compare with the API's.
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
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
    if (child.exitCode !== null) throw new Error(`${script} exited`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch {}
    if (Date.now() > deadline) throw new Error(`${script} did not start`)
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
