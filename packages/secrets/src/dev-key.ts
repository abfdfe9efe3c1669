import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { generateSecretKey } from './secret-box.ts'

/**
 * Development only: the key in `file`, generated on first use. Several processes start at once (api, dispatcher), so
 * the key is written to a file of this process's own (`wx`, mode 0600) and published with link(2), which fails if the
 * name exists: exactly one process creates it, whole, and every other reads that one. Returns the key text and
 * whether this call created it.
 */
export function loadOrCreateDevKey(file: string): { key: string; created: boolean } {
  const { value, created } = loadOrCreateSecretFile(file, generateSecretKey)
  return { key: value, created }
}

/** The same for any development secret (e.g. the admin token): `generate` makes the value when none exists yet. */
export function loadOrCreateSecretFile(file: string, generate: () => string): { value: string; created: boolean } {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  let created = false
  try {
    return { value: readFileSync(file, 'utf8').trim(), created }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`
  writeFileSync(tmp, `${generate()}\n`, { flag: 'wx', mode: 0o600 })
  try {
    linkSync(tmp, file)
    created = true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    unlinkSync(tmp)
  }
  return { value: readFileSync(file, 'utf8').trim(), created }
}
