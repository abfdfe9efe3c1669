// Headless Chromium for the browser tests (dashboard, review desk, /docs): Debian's `chromium`, driven by
// playwright-core. npm test installs it when it is missing; without it a browser test fails, it is never skipped.
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { expect } from 'vitest'

export const CHROMIUM = '/usr/bin/chromium'
// The flags a sandboxed root session needs, and no background traffic on a machine without a network.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Starts headless Chromium; the caller closes it (`afterAll(() => browser?.close())`). */
export async function launchChromium(): Promise<Browser> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} (apt-get install chromium)`).toBe(true)
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
}
