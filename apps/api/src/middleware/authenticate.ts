import { createHash, timingSafeEqual } from 'node:crypto'

/** `Authorization: Bearer <token>` against the operator token, in constant time. */
export function adminTokenMatches(header: string, adminToken: string): boolean {
  const token = header.startsWith('Bearer ') ? header.slice(7) : ''
  if (!token) return false
  const a = createHash('sha256').update(token).digest()
  const b = createHash('sha256').update(adminToken).digest()
  return timingSafeEqual(a, b)
}
