import { randomBytes } from 'node:crypto'
import { loadOrCreateSecretFile } from '@quire/secrets'

/**
 * A development secret kept in a file (e.g. `.data/admin-token`): read when it exists, else generated (random bytes,
 * hex, mode 0600) so that, of several processes starting at once, exactly one creates it and all read the same value.
 * Never used in production, where secrets come from the environment.
 */
export function readOrCreateDevSecret(file: string, bytes = 32): { value: string; created: boolean } {
  return loadOrCreateSecretFile(file, () => randomBytes(bytes).toString('hex'))
}
