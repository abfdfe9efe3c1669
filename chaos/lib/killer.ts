// kill -9 one app of a chaos stack again and again, restarting it after each kill as a supervisor or a container
// restart policy would.
import { sleep } from '../../bench/lib/kit.ts'
import type { AppName, ChaosStack } from './stack.ts'

export type Killer = {
  /** Each kill: the process killed and its child processes at that moment. */
  kills: { pid: number; children: number[] }[]
  /** When the last restart finished (performance.now()), for the recovery time. */
  lastRestart(): number
  /** Stops killing (after the kill under way, if any) and waits for the loop to end. */
  stop(): Promise<void>
  /** Resolves once `times` kills were made (or after `stop`). */
  finished: Promise<void>
}

export function killRepeatedly(
  stack: ChaosStack,
  app: AppName,
  opts: { times?: number; pauseMs: () => number; restartAfterMs: number },
): Killer {
  const kills: Killer['kills'] = []
  let lastRestart = performance.now()
  let stopped = false
  const finished = (async () => {
    while (!stopped && kills.length < (opts.times ?? Number.POSITIVE_INFINITY)) {
      await sleep(opts.pauseMs())
      if (stopped) break
      kills.push(await stack.kill(app))
      await sleep(opts.restartAfterMs)
      await stack.start(app)
      lastRestart = performance.now()
    }
  })()
  return {
    kills,
    lastRestart: () => lastRestart,
    finished,
    async stop() {
      stopped = true
      await finished
    },
  }
}
