import { randomBytes } from 'node:crypto'

/** Prefix of every signing secret Quire issues. */
export const SECRET_PREFIX = 'whsec_'

/**
 * Issues a new webhook signing secret: `whsec_` + 32 random bytes in base64url.
 * The whole string (prefix included) is the HMAC key; receivers must not base64-decode it.
 */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url')
}
