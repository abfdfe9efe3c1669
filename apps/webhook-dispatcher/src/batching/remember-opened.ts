import type { SecretBox } from '@quire/secrets'

/**
 * `open` that remembers what it opened, by sealed value: every attempt of a webhook's deliveries opens the same sealed
 * signing secret (and credential), an AES-GCM decryption each time otherwise. A re-sealed or changed secret is another
 * sealed value, so it is opened anew; a value that fails to open is not remembered. At most `max` values are kept
 * (the oldest goes first).
 */
export function rememberOpened(box: Pick<SecretBox, 'open'>, max = 1_000): Pick<SecretBox, 'open'> {
  const opened = new Map<string, string>()
  return {
    open(stored) {
      const known = opened.get(stored)
      if (known !== undefined) return known
      const plain = box.open(stored)
      if (opened.size >= max) opened.delete(opened.keys().next().value as string)
      opened.set(stored, plain)
      return plain
    },
  }
}
